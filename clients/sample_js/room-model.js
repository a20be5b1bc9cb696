// A room's state as the client knows it: a `snapshot` message, kept current by
// applying each room event in seq order. Returns a line for the hand log, or null.

function seatOf(model, player) {
  return model.seats.find((s) => s.player === player);
}

function nameOf(model, player) {
  return seatOf(model, player)?.name ?? (player === model.you ? "you" : "a player");
}

export function applyEvent(model, e) {
  model.seq = e.seq;
  const seat = e.player ? seatOf(model, e.player) : null;
  const who = e.player ? nameOf(model, e.player) : "";
  const hand = model.hand;
  switch (e.type) {
    case "player_joined":
      if (!seat) {
        model.seats.push({
          player: e.player, name: e.name, seat: e.seat, stack: e.stack, ready: true, connected: true,
          in_hand: false, folded: false, dice: [], dice_count: 0, bet: 0, contributed: 0,
          bot: e.bot === true,
        });
        model.seats.sort((a, b) => a.seat - b.seat);
      }
      if (e.player === model.you) model.role = "player";
      return `${e.name} sits down with ${e.stack}`;
    case "player_left":
      model.seats = model.seats.filter((s) => s.player !== e.player);
      return `${who} leaves with ${e.stack}`;
    case "spectators_changed":
      model.spectators = e.spectators;
      return null;
    case "player_disconnected":
      if (seat) seat.connected = false;
      return `${who} lost the connection`;
    case "player_reconnected":
      if (seat) seat.connected = true;
      return `${who} is back`;
    case "readiness_changed":
      if (seat) seat.ready = e.ready;
      return `${who} ${e.ready ? "sits in" : "sits out"}`;
    case "player_busted":
      return `${who} is out of chips`;
    case "hand_started":
      model.button = e.button;
      model.hand = {
        number: e.hand, phase: "roll", button: e.button, players: e.players, to_act: [], pot: 0,
        current_bet: 0, street: e.variant === "stud" ? 1 : 0, draw_round: 0, pots: [], winners: [],
      };
      model.next_hand_at = null;
      for (const s of model.seats) {
        s.in_hand = e.players.includes(s.player);
        s.folded = false;
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
      return `Hand ${e.hand} begins` + (e.antes.length ? `: everyone pays ${e.antes[0].amount}` : "");
    case "ante_paid":
      if (seat) { seat.stack = e.stack; seat.contributed += e.amount; }
      if (hand) hand.pot += e.amount;
      return `${who} pays ${e.amount}${e.all_in ? " (all in)" : ""}`;
    case "dice_rolled":
      if (seat) { seat.dice = e.dice; seat.dice_count = e.dice.length; }
      if (hand) hand.to_act = hand.to_act.filter((p) => p !== e.player);
      return `${who} rolls ${e.faces.join(" ")}${e.private ? " (only you see this)" : ""}`;
    case "rolled_in_secret":
      if (seat) { seat.dice = null; seat.dice_count = 4; }
      if (hand) hand.to_act = hand.to_act.filter((p) => p !== e.player);
      return `${who} rolls in secret`;
    case "draw_round_started":
      if (hand) { hand.phase = "draw"; hand.draw_round = e.round; }
      return `Draw round ${e.round}${e.last ? " (last)" : ""}`;
    case "street_started":
      if (hand) { hand.phase = "roll"; hand.street = e.street; }
      return `Street ${e.street}`;
    case "waiting_for": {
      const begins = hand && e.phase === "betting" && hand.phase !== "betting";
      if (hand) { hand.to_act = e.players; hand.phase = e.phase; hand.deadline = e.deadline; }
      return begins ? "Betting begins" : null;
    }
    case "timed_out":
      return `${who}'s time ran out`;
    case "checked":
      return `${who} checks`;
    case "bet_placed":
      if (seat) { seat.stack = e.stack; seat.bet = e.total; seat.contributed += e.added; }
      if (hand) { hand.pot += e.added; hand.current_bet = Math.max(hand.current_bet, e.total); }
      return `${who} ${e.action === "call" ? "calls" : e.action === "bet" ? "bets" : "raises to"} ${e.action === "call" ? e.added : e.total}${e.all_in ? " (all in)" : ""}`;
    case "folded":
      if (seat) seat.folded = true;
      if (hand) hand.to_act = hand.to_act.filter((p) => p !== e.player);
      return `${who} folds${e.reason === "timeout" ? " (time)" : e.reason === "left" ? " (left)" : ""}`;
    case "bet_returned":
      if (seat) { seat.stack = e.stack; seat.bet -= e.amount; seat.contributed -= e.amount; }
      if (hand) hand.pot -= e.amount;
      return `${e.amount} uncalled goes back to ${who}`;
    case "rerolled":
      if (seat) { seat.dice = e.dice; seat.stack = e.stack; seat.contributed += e.paid; }
      if (hand) hand.pot += e.paid;
      return `${who} pays ${e.paid} and rerolls a ${e.old}: ${e.new}`;
    case "passed":
      return `${who} passes`;
    case "showdown": {
      if (hand) hand.pots = e.pots;
      const lines = e.hands.map((h) => {
        const shown = seatOf(model, h.player);
        if (shown) { shown.dice = h.dice; shown.dice_count = 4; }
        return `${nameOf(model, h.player)} shows ${h.dice.join(" ")}: ${h.hand_name}`;
      });
      if (e.pots.length > 1) lines.push(`${e.pots.length} pots: ${e.pots.map((p) => p.amount).join(", ")}`);
      return lines.join("\n");
    }
    case "roll_off":
      return `Roll-off for pot ${e.pot + 1} (${e.reason === "tie" ? "a tie" : "no winner"}): ` +
        e.rolls.map((r) => `${nameOf(model, r.player)} ${r.dice.join(" ")} ${r.hand_name}`).join("; ");
    case "pot_awarded":
      if (seat) seat.stack = e.stack;
      if (hand) hand.winners.push(e.player);
      return `${who} wins ${e.amount}${e.hand_name ? ` with ${e.hand_name}` : ""}`;
    case "hand_ended":
      for (const { player, stack } of e.stacks) {
        const s = seatOf(model, player);
        if (s) { s.stack = stack; s.bet = 0; }
      }
      if (hand) { hand.phase = "complete"; hand.to_act = []; }
      model.hands_played = e.hand;
      model.next_hand_at = e.next_hand_at;
      return `Hand ${e.hand} is over`;
    default:
      return null;
  }
}
