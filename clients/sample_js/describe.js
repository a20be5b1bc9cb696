// The game in words: variants, pots, awards, who sits out and why, the table's
// state between hands. Returns strings or lines of parts (see room-model.js);
// no DOM, so the live table and the hand history say things the same way.

import { potLabel, who } from "./room-model.js";
import { rollName } from "./scoring.js";

export const VARIANT_NAMES = { simple: "Simple", liars: "Liars'", draw: "Draw", stud: "Stud" };
const STRUCTURES = { no_limit: "no limit", pot_limit: "pot limit", fixed_limit: "fixed limit" };

export function variantLabel(settings) {
  const betting = settings.betting_structure ? ` (${STRUCTURES[settings.betting_structure]})` : "";
  return `${VARIANT_NAMES[settings.variant] ?? settings.variant}${betting}`;
}

/** Is a hand being played? */
export function live(model) {
  return Boolean(model?.hand && model.hand.phase !== "complete");
}

/** Out of chips: not dealt in again until they leave and buy in again. */
export function busted(model, seat) {
  if (seat.busted) return true;
  return seat.stack === 0 && !(live(model) && seat.in_hand);
}

/**
 * The chips of a player's own in a pot they alone may win (liars' and stud side
 * pots): what they put in above the next highest total of a player still in
 * (rules §4.2.3). The rest of such a pot is chips that folded players left in it.
 */
function ownShare(model, award) {
  const total = (player) => model.seats.find((s) => s.player === player)?.contributed;
  const mine = total(award.player);
  const others = (model.hand?.still_in ?? []).filter((p) => p !== award.player).map(total);
  if (mine === undefined || others.some((t) => t === undefined)) return award.amount;
  return Math.min(award.amount, Math.max(0, mine - Math.max(0, ...others)));
}

/**
 * The line for the chips a hand hands out: a returned bet (a refund), a pot
 * only one player could win (a refund, plus any chips folded players left in
 * it), a hand won by folds, or a contest won (and what it beat). Built from
 * the room as it was before the event.
 */
export function describeAward(model, award, rollOffs = []) {
  const hand = model.hand;
  const winner = who(model, award.player);
  if (award.type === "bet_returned") {
    const bet = model.seats.find((s) => s.player === award.player)?.bet ?? award.amount;
    const called = bet - award.amount;
    return [winner, ` gets ${award.amount} back: ${called > 0 ? `nobody matched more than ${called} of that bet` : "nobody called that bet"}.`];
  }
  const pots = hand?.pots ?? [];
  const label = potLabel(award.pot, pots.length);
  if (!award.hand_name) {
    if (!hand?.showdown && !award.amount) return [winner, " is the last one in, with nothing in the pot: everyone else folded before paying."];
    if (!hand?.showdown) return [winner, ` wins ${award.amount}: nobody else was left in.`];
    const own = ownShare(model, award);
    if (own >= award.amount) {
      return [winner, ` gets ${award.amount} back: ${label} held only chips nobody still in could match, so nobody contested it.`];
    }
    return [winner, ` gets ${own} back and takes the ${award.amount - own} that folded players left in ${label}: nobody still in could match that much, so nobody contested it.`];
  }
  // After a roll-off, its last round decided; otherwise the dice on the table did.
  const last = rollOffs.filter((r) => r.pot === award.pot).at(-1);
  const beaten = [];
  if (last) {
    for (const r of last.rolls) if (r.player !== award.player) beaten.push([who(model, r.player), `'s ${r.hand_name}`]);
  } else {
    for (const player of pots[award.pot]?.eligible ?? []) {
      if (player === award.player) continue;
      const seat = model.seats.find((s) => s.player === player);
      if (seat?.dice?.length === 4) beaten.push([who(model, player), `'s ${rollName(seat.dice)}`]);
    }
  }
  const parts = [winner, ` wins ${label} (${award.amount}) with ${award.hand_name}${last ? " in a roll-off" : ""}`];
  if (!beaten.length) return [...parts, "."];
  parts.push(`: ${award.hand_name} beats `);
  beaten.forEach((b, i) => parts.push(i ? ", " : "", ...b));
  parts.push(".");
  return parts;
}

/** Why someone sits a hand out, addressed to them. */
export function sitOutWords(reason, model) {
  const ante = model.settings.ante;
  return {
    busted: "You are out of chips, so you sit this hand out.",
    not_ready: "You sit this hand out: you chose to sit out. Press “Sit in” to be dealt in again.",
    short_stack: `You sit this hand out: your stack is smaller than the ante (${ante}).`,
  }[reason] ?? "You sit this hand out.";
}

/** Seated players who could be dealt into the next hand. */
function canPlay(model, seat) {
  const least = model.settings.variant === "stud" ? 1 : model.settings.ante;
  return seat.ready && seat.stack >= least;
}

/** The one player holding every chip at the table, once the others are out. */
export function tableWinner(model) {
  if (live(model) || model.seats.length < 2 || !model.hand) return null;
  const withChips = model.seats.filter((s) => s.stack > 0);
  return withChips.length === 1 ? withChips[0] : null;
}

/**
 * What the table is doing between hands, in words, for the banner above the
 * seats: { text, deadline? } where deadline (server ms) starts a countdown.
 */
export function between(model) {
  const first = !model.hand;
  const seated = model.seats.length;
  const ready = model.seats.filter((s) => canPlay(model, s)).length;
  if (seated < 2) return { text: seated ? "Waiting for one more player to sit down." : "Waiting for players to sit down." };
  if (ready < 2) return { text: "Waiting for a second player who is sitting in and has chips for the ante." };
  if (model.next_hand_at) {
    return { text: first ? "The first hand starts in " : `Hand ${model.hand.number + 1} starts in `, deadline: model.next_hand_at };
  }
  return { text: first ? "The first hand starts in a moment." : "The next hand starts in a moment." };
}

/** What the player should know about their own place at the table right now. */
export function myStanding(model) {
  const me = model.seats.find((s) => s.player === model.you);
  if (!me) return model.role === "spectator" ? "You are watching. Sit down from the lobby to play." : "";
  if (busted(model, me)) {
    return `You are out of chips. To play on, buy in again: you sit down with a fresh stack of ${model.settings.starting_chips}.`;
  }
  if (live(model) && !me.in_hand) {
    const reason = model.sitting_out?.[me.player];
    return reason ? sitOutWords(reason, model) : "You sat down during this hand: you are dealt in from the next one.";
  }
  if (live(model) && me.folded) return "You folded: you are out of this hand.";
  if (!me.ready && live(model)) return "You play this hand out, then sit out until you press “Sit in”.";
  if (!me.ready) return "You are sitting out: press “Sit in” to be dealt into the next hand.";
  return "";
}

/** A short hint of what a prompt asks for. */
export function promptHint(prompt) {
  const legal = prompt.legal;
  switch (prompt.phase) {
    case "roll": return "roll your dice";
    case "draw": return legal.actions.includes("reroll") ? `reroll one die for ${legal.reroll_cost}, or pass` : "pass";
    case "stud_ante": return `pay ${legal.ante_amount} to stay in, or fold`;
    case "betting": return legal.call_amount ? `${legal.call_amount} to call` : "check or bet";
    default: return "";
  }
}
