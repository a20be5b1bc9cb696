// A room's state as the client knows it: a `snapshot` message, kept current by
// applying each room event in seq order. `applyEvent` returns the lines the
// event adds to the hand log: each line an array of parts, a part being a
// string, `{name}` (a player's name, shown isolated) or `{dice}` (faces).
// No DOM here: the same function replays a hand for the hand history.

import { rollName } from "./scoring.js";

function seatOf(model, player) {
  return model.seats.find((s) => s.player === player);
}

/** The `{name}` part for a player: their seat's name, else a name remembered from the hand. */
export function who(model, player) {
  const name = seatOf(model, player)?.name ?? model.names?.[player];
  if (name !== undefined) return { name };
  return player === model.you ? "you" : "a player";
}

/** "the pot" when there is one; otherwise "the main pot", "side pot 1", ... (the same words everywhere). */
export function potLabel(index, count) {
  if (count <= 1) return "the pot";
  return index === 0 ? "the main pot" : `side pot ${index}`;
}

function named(dice) {
  const name = rollName(dice);
  return name ? `: ${name}` : "";
}

export function applyEvent(model, e) {
  model.seq = e.seq;
  const seat = e.player ? seatOf(model, e.player) : null;
  const name = e.player ? who(model, e.player) : "";
  const hand = model.hand;
  if (e.player && seat) (model.names ??= {})[e.player] = seat.name;
  switch (e.type) {
    case "player_joined":
      (model.names ??= {})[e.player] = e.name;
      if (!seat) {
        model.seats.push({
          player: e.player, name: e.name, seat: e.seat, stack: e.stack, ready: true, connected: true,
          in_hand: false, folded: false, dice: [], dice_count: 0, bet: 0, contributed: 0,
          bot: e.bot === true, bot_level: e.bot_level ?? null, bot_speed: e.bot_speed ?? null,
        });
        model.seats.sort((a, b) => a.seat - b.seat);
      }
      if (e.player === model.you) model.role = "player";
      return [[{ name: e.name }, ` sits down with ${e.stack}`]];
    case "player_left":
      model.seats = model.seats.filter((s) => s.player !== e.player);
      return [[name, ` leaves with ${e.stack}`]];
    case "spectators_changed":
      model.spectators = e.spectators;
      return [];
    case "player_disconnected":
      if (seat) seat.connected = false;
      return [[name, " lost the connection"]];
    case "player_reconnected":
      if (seat) seat.connected = true;
      return [[name, " is back"]];
    case "next_hand": // between hands: the next one scheduled (`at`) or cancelled (null)
      model.next_hand_at = e.at;
      return [];
    case "readiness_changed":
      if (seat) seat.ready = e.ready;
      return [[name, e.ready ? " sits in" : " sits out"]];
    case "player_busted":
      if (seat) seat.busted = true;
      return [[name, " is out of chips"]];
    case "hand_started": {
      model.button = e.button;
      model.hand = {
        number: e.hand, phase: "roll", button: e.button, players: e.players, to_act: [], pot: 0,
        current_bet: 0, street: e.variant === "stud" ? 1 : 0, draw_round: 0, pots: [], winners: [],
      };
      model.next_hand_at = null;
      model.sitting_out = Object.fromEntries(e.sitting_out.map((s) => [s.player, s.reason]));
      for (const s of model.seats) {
        s.in_hand = e.players.includes(s.player);
        s.folded = false;
        s.busted = model.sitting_out[s.player] === "busted";
        // null means hidden from us: another player's liars' dice, even before they roll.
        s.dice = s.in_hand && e.variant === "liars" && s.player !== model.you ? null : [];
        s.dice_count = 0;
        s.bet = 0;
        s.contributed = 0;
      }
      for (const ante of e.antes) {
        const payer = seatOf(model, ante.player);
        if (payer) { payer.stack = ante.stack; payer.contributed += ante.amount; }
        model.hand.pot += ante.amount;
      }
      return [[`Hand ${e.hand} begins` + (e.antes.length ? `: everyone pays ${e.antes[0].amount}` : "")]];
    }
    case "ante_paid":
      if (seat) { seat.stack = e.stack; seat.contributed += e.amount; }
      if (hand) hand.pot += e.amount;
      return [[name, ` pays ${e.amount}${e.all_in ? " (all in)" : ""}`]];
    case "dice_rolled":
      if (seat) { seat.dice = e.dice; seat.dice_count = e.dice.length; }
      if (hand) hand.to_act = hand.to_act.filter((p) => p !== e.player);
      return [[name, " rolls ", { dice: e.faces }, named(e.dice), e.private ? " (only you see this)" : ""]];
    case "rolled_in_secret":
      if (seat) { seat.dice = null; seat.dice_count = 4; }
      if (hand) hand.to_act = hand.to_act.filter((p) => p !== e.player);
      return [[name, " rolls in secret"]];
    case "draw_round_started":
      if (hand) { hand.phase = "draw"; hand.draw_round = e.round; }
      return [[`Draw round ${e.round}${e.last ? " (last)" : ""}`]];
    case "street_started":
      if (hand) { hand.phase = "roll"; hand.street = e.street; }
      return [[`Street ${e.street}`]];
    case "waiting_for": {
      const begins = hand && e.phase === "betting" && hand.phase !== "betting";
      if (hand) { hand.to_act = e.players; hand.phase = e.phase; hand.deadline = e.deadline; }
      return begins ? [["Betting begins"]] : [];
    }
    case "timed_out":
      return [[name, "'s time ran out"]];
    case "checked":
      return [[name, " checks"]];
    case "bet_placed": {
      if (seat) { seat.stack = e.stack; seat.bet = e.total; seat.contributed += e.added; }
      if (hand) { hand.pot += e.added; hand.current_bet = Math.max(hand.current_bet, e.total); }
      const verb = { call: ` calls ${e.added}`, bet: ` bets ${e.total}`, raise: ` raises to ${e.total}` }[e.action];
      return [[name, verb, e.all_in ? " (all in)" : ""]];
    }
    case "folded":
      if (seat) seat.folded = true;
      if (hand) hand.to_act = hand.to_act.filter((p) => p !== e.player);
      return [[name, " folds", e.reason === "timeout" ? " (time)" : e.reason === "left" ? " (left)" : ""]];
    case "bet_returned":
      if (seat) { seat.stack = e.stack; seat.bet -= e.amount; seat.contributed -= e.amount; }
      if (hand) hand.pot -= e.amount;
      return [[name, ` gets ${e.amount} back (uncalled)`]];
    case "rerolled":
      if (seat) { seat.dice = e.dice; seat.stack = e.stack; seat.contributed += e.paid; }
      if (hand) hand.pot += e.paid;
      return [[name, ` pays ${e.paid} and rerolls a ${e.old}: ${e.new} (now `, { dice: e.dice }, `${named(e.dice)})`]];
    case "passed":
      return [[name, " passes"]];
    case "showdown": {
      if (hand) { hand.pots = e.pots; hand.showdown = true; hand.to_act = []; hand.still_in = e.hands.map((h) => h.player); }
      const lines = e.hands.map((h) => {
        const shown = seatOf(model, h.player);
        if (shown) { shown.dice = h.dice; shown.dice_count = 4; }
        return [who(model, h.player), " shows ", { dice: h.dice }, `: ${h.hand_name}`];
      });
      if (e.pots.length > 1) {
        lines.push([e.pots.map((p, i) => `${potLabel(i, e.pots.length)} ${p.amount}`).join(", ")]);
      }
      return lines;
    }
    case "roll_off": {
      const count = hand?.pots.length ?? 1;
      const parts = [`Roll-off for ${potLabel(e.pot, count)}, round ${e.round} (${e.reason === "tie" ? "a tie" : "no winning roll"}): `];
      e.rolls.forEach((r, i) => parts.push(i ? "; " : "", who(model, r.player), " ", { dice: r.dice }, ` ${r.hand_name}`));
      return [parts];
    }
    case "pot_awarded": {
      if (seat) seat.stack = e.stack;
      if (hand) {
        hand.winners.push(e.player);
        (hand.won ??= {})[e.player] = (hand.won[e.player] ?? 0) + e.amount; // for the winner's badge
        hand.pot = Math.max(0, hand.pot - e.amount); // paid out: no longer in the pot
      }
      const label = potLabel(e.pot, hand?.pots.length ?? 1);
      if (e.hand_name) return [[name, ` wins ${label} (${e.amount}) with ${e.hand_name}`]];
      if (hand?.showdown) return [[name, ` gets ${label} (${e.amount}) back: nobody else could win it`]];
      return [[name, ` takes ${label} (${e.amount})`]];
    }
    case "hand_ended":
      for (const { player, stack } of e.stacks) {
        const s = seatOf(model, player);
        if (s) { s.stack = stack; s.bet = 0; }
      }
      if (hand) { hand.phase = "complete"; hand.to_act = []; hand.pot = 0; }
      model.hands_played = e.hand;
      model.next_hand_at = e.next_hand_at;
      return [[`Hand ${e.hand} is over`]];
    default:
      return [];
  }
}
