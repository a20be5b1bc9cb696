"""Per-viewer snapshots (RULES §6)."""

from __future__ import annotations

from server.engine import Bet, Call, Check, Fold, Game, Phase, Roll, view

from .helpers import start, table

VENUS = (6, 4, 3, 1)
SENIO = (6, 6, 1, 1)
DOG = (1, 1, 1, 1)


def dice_seen(game: Game, viewer: str | None) -> dict[str, tuple[int, ...] | None]:
    return {s.player: s.dice for s in view(game.state, viewer).seats}


def test_liars_each_sees_their_own_and_after_showdown_the_revealed() -> None:
    game = table("liars", dice=[*VENUS, *SENIO, *DOG])
    start(game, button="c")
    for player in "abc":
        game.act(player, Roll())
    assert dice_seen(game, "a") == {"a": VENUS, "b": None, "c": None}
    assert dice_seen(game, None) == {"a": None, "b": None, "c": None}
    snapshot = view(game.state, "b")
    assert [s.dice_count for s in snapshot.seats] == [4, 4, 4]
    assert snapshot.hand is not None
    assert snapshot.hand.phase is Phase.BETTING
    assert snapshot.hand.to_act == ("a",)
    assert snapshot.hand.pot == 3
    game.act("a", Bet(10))
    game.act("b", Call())
    assert view(game.state, None).hand.current_bet == 10  # type: ignore[union-attr]
    assert [s.bet for s in view(game.state, None).seats] == [10, 10, 0]
    game.act("c", Fold())
    # a and b were revealed at showdown; c folded and stays hidden, for good.
    for viewer in ("a", "b", None):
        assert dice_seen(game, viewer) == {"a": VENUS, "b": SENIO, "c": None}
    assert dice_seen(game, "c") == {"a": VENUS, "b": SENIO, "c": DOG}
    final = view(game.state, None)
    assert final.hand is not None
    assert final.hand.winners == ("a",)
    assert final.hand.phase is Phase.COMPLETE
    assert [s.folded for s in final.seats] == [False, False, True]


def test_public_variants_show_everything_to_everyone() -> None:
    game = table("simple", players="ab", dice=[*VENUS, *SENIO])
    start(game, button="b")
    game.act("a", Roll())
    assert dice_seen(game, None) == {"a": VENUS, "b": ()}
    assert dice_seen(game, "b") == {"a": VENUS, "b": ()}


def test_a_win_by_folds_shows_no_dice_to_anyone_else() -> None:
    game = table("liars", players="ab", dice=[*VENUS, *SENIO])
    start(game, button="b")
    game.act("a", Roll())
    game.act("b", Roll())
    game.act("a", Check())
    game.act("b", Bet(5))
    game.act("a", Fold())
    assert dice_seen(game, "a") == {"a": VENUS, "b": None}
    assert dice_seen(game, "b") == {"a": None, "b": SENIO}
    assert dice_seen(game, None) == {"a": None, "b": None}


def test_view_carries_the_settings_and_the_button() -> None:
    game = table("stud", players="ab", ante=2)
    snapshot = view(game.state, "a")
    assert snapshot.settings["ante"] == 2
    assert snapshot.settings["variant"] == "stud"
    assert snapshot.hand is None
    assert snapshot.button is None
    assert [(s.player, s.seat, s.stack, s.in_hand) for s in snapshot.seats] == [
        ("a", 0, 100, False),
        ("b", 1, 100, False),
    ]


def test_null_dice_mean_hidden_and_nothing_else() -> None:
    # In liars', another dealt-in player's dice are hidden (null) even before they
    # roll; one's own are shown, empty before rolling; a player not dealt in holds
    # no dice, which is no secret: an empty list for everyone.
    game = table("liars", players="abc", dice=[*VENUS, *SENIO])
    game.set_ready("c", False)
    start(game, button="b")
    assert dice_seen(game, "a") == {"a": (), "b": None, "c": ()}
    assert dice_seen(game, None) == {"a": None, "b": None, "c": ()}
    assert dice_seen(game, "c") == {"a": None, "b": None, "c": ()}
