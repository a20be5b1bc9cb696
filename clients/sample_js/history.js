// The hands a player saw, as they saw them: for each hand, the room events it
// received (its own hidden dice included, nobody else's), kept in order with
// the names of the players at the table. A record is plain data, so the same
// view shows hands recorded here and hands a server could one day send back
// (a `hand_history` request): `fill()` takes those.
//
// Records are kept per player and room in `storage` (localStorage), so a
// reload or a reopened tab still has them; the newest LIMIT are kept.

import { applyEvent } from "./room-model.js";
import { describeAward } from "./describe.js";

const LIMIT = 30;
// The events that belong to a hand (chat and comings and goings do not).
const HAND_EVENTS = new Set([
  "hand_started", "ante_paid", "dice_rolled", "rolled_in_secret", "draw_round_started", "street_started",
  "timed_out", "checked", "bet_placed", "folded", "bet_returned", "rerolled", "passed", "showdown",
  "roll_off", "pot_awarded", "hand_ended", "player_busted",
]);

export class HandHistory {
  constructor(storage = globalThis.localStorage) {
    this.storage = storage;
    this.key = null;
    this.hands = []; // records, oldest first
  }

  /** Start keeping the hands of `room` for `player` (loading any kept before). */
  open(player, room) {
    const key = `tali.hands.${player}.${room}`;
    if (key === this.key) return;
    this.key = key;
    try {
      this.hands = JSON.parse(this.storage?.getItem(key) ?? "[]");
    } catch {
      this.hands = [];
    }
  }

  close() {
    this.key = null;
    this.hands = [];
  }

  /** Forget the hands of every room but these (called with the rooms a session is in). */
  prune(player, rooms) {
    if (!this.storage) return;
    const keep = new Set(rooms.map((room) => `tali.hands.${player}.${room}`));
    for (let i = this.storage.length - 1; i >= 0; i -= 1) {
      const key = this.storage.key(i);
      if (key?.startsWith("tali.hands.") && !keep.has(key)) this.storage.removeItem(key);
    }
  }

  get current() {
    const last = this.hands.at(-1);
    return last && !last.complete ? last : null;
  }

  /** Record an event as it arrived. `model` is the room before the event is applied. */
  record(event, model) {
    if (!HAND_EVENTS.has(event.type)) return;
    if (event.type === "hand_started") {
      const unfinished = this.current;
      if (unfinished) Object.assign(unfinished, { complete: true, gap: true });
      const names = Object.fromEntries(model.seats.map((s) => [s.player, s.name]));
      this.hands.push({
        room: event.room, hand: event.hand, you: model.you, variant: event.variant,
        settings: model.settings, names, events: [], complete: false, gap: false,
      });
    }
    const target = this.current ?? (event.type === "player_busted" ? this.hands.at(-1) : null);
    if (!target || (event.hand !== undefined && event.hand !== target.hand)) return;
    target.events.push(event);
    if (event.type === "hand_ended") target.complete = true;
    if (event.type === "hand_ended" || event.type === "player_busted") this.save();
  }

  /** A snapshot arrived (a reload, a resync): events of the open hand may have been missed. */
  snapshot(model) {
    const open = this.current;
    if (!open) return;
    const last = open.events.at(-1)?.seq ?? 0;
    if (!model.hand || model.hand.number !== open.hand || model.seq > last) open.gap = true;
    if (!model.hand || model.hand.number !== open.hand) open.complete = true;
    this.save();
  }

  /** Add records from elsewhere (e.g. a server's hand history), replacing those of the same hands. */
  fill(records) {
    const byHand = new Map(this.hands.map((r) => [r.hand, r]));
    for (const record of records) byHand.set(record.hand, { gap: false, complete: true, ...record });
    this.hands = [...byHand.values()].sort((a, b) => a.hand - b.hand).slice(-LIMIT);
    this.save();
  }

  /** Finished hands, newest first. */
  finished() {
    return this.hands.filter((r) => r.complete).reverse();
  }

  save() {
    if (!this.key || !this.storage) return;
    this.hands = this.hands.slice(-LIMIT);
    try {
      this.storage.setItem(this.key, JSON.stringify(this.hands));
    } catch {
      // storage full or refused: the history stays in memory
    }
  }
}

/**
 * Replay a record into what the history view shows: the log lines, the
 * results, each player's last dice, and a one-line summary.
 */
export function replay(record) {
  const model = {
    you: record.you, settings: record.settings ?? { variant: record.variant }, names: { ...record.names },
    seats: Object.entries(record.names).map(([player, name], seat) => ({
      player, name, seat, stack: 0, ready: true, connected: true, in_hand: false, folded: false,
      dice: [], dice_count: 0, bet: 0, contributed: 0,
    })),
    spectators: 0, hand: null,
  };
  const lines = [];
  const results = [];
  const rollOffs = [];
  const winners = [];
  for (const event of record.events) {
    if (event.type === "roll_off") rollOffs.push(event);
    const before = event.type === "bet_returned" || event.type === "pot_awarded" ? describeAward(model, event, rollOffs) : null;
    if (event.type === "pot_awarded") winners.push(event);
    lines.push(...applyEvent(model, event));
    if (before) results.push(before);
  }
  const dice = model.seats
    .filter((s) => s.in_hand && s.dice?.length === 4)
    .map((s) => ({ player: s.player, name: s.name, dice: s.dice, folded: s.folded }));
  const top = winners.filter((w) => w.hand_name || !model.hand?.showdown).at(0) ?? winners.at(0);
  const summary = top
    ? [`Hand ${record.hand}: `, { name: record.names[top.player] ?? "a player" }, ` won ${top.amount}${top.hand_name ? ` with ${top.hand_name}` : ""}`]
    : [`Hand ${record.hand}`];
  return { lines, results, dice, summary, gap: record.gap };
}
