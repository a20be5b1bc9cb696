// The hands a player saw, as they saw them. The server keeps each room's last
// hands and sends them back on a `hand_history` request, each as the asking
// player saw it (their own hidden dice included, nobody else's): that is what
// the "earlier hands" panel shows, so it is the same on a new device.
//
// What the server's record lacks, this page keeps in `storage` (localStorage),
// per player and room: the names of the players it has seen (the events carry
// ids only), the entropy it sent with each of its rolls, so that a hand's
// dice can be checked after a reload too (tali/fair-hand.js), and the latest chat,
// so that a reload does not wipe the conversation.

import { applyEvent } from "./room-model.js";
import { describeAward } from "./describe.js";

const LIMIT = 20; // hands shown (the most one hand_history request returns)
const KEPT = 30; // hands whose sent entropy is kept
const CHAT = 100; // chat lines kept

export class HandHistory {
  constructor(storage = globalThis.localStorage) {
    this.storage = storage;
    this.key = null;
    this.names = {}; // player id -> name, for hands whose players have left
    this.sent = {}; // hand number -> { seq -> entropy we sent }
    this.chat = []; // the room's latest chat events, oldest first
    this.failures = {}; // hand number -> a failed dice check of what this page saw
    this.stacks = []; // [hand, your stack after it, pot you won]: this evening at the table
    this.hands = []; // records, oldest first: { room, you, settings, names, hand, events, opening }
    this.gone = new Set(); // hands the server no longer keeps (older than the oldest it sent)
  }

  /** Start on `room` for `player`, loading what this browser kept of it. */
  open(player, room) {
    const key = `tali.room.${player}.${room}`;
    if (key === this.key) return;
    this.key = key;
    this.hands = [];
    this.gone = new Set();
    let kept;
    try {
      kept = JSON.parse(this.storage?.getItem(key) ?? "{}") ?? {};
    } catch {
      kept = {};
    }
    this.names = kept.names ?? {};
    this.sent = kept.sent ?? {};
    this.chat = kept.chat ?? [];
    this.failures = kept.failures ?? {};
    this.stacks = kept.stacks ?? [];
  }

  /** We left the room: what was kept of it goes too. */
  forget() {
    if (this.key) this.storage?.removeItem(this.key);
    this.close();
  }

  close() {
    this.key = null;
    this.names = {};
    this.sent = {};
    this.chat = [];
    this.failures = {};
    this.stacks = [];
    this.hands = [];
    this.gone = new Set();
  }

  /** Forget what was kept of every room but these (called with the rooms a session is in). */
  prune(player, rooms) {
    if (!this.storage) return;
    const keep = new Set(rooms.map((room) => `tali.room.${player}.${room}`));
    for (let i = this.storage.length - 1; i >= 0; i -= 1) {
      const key = this.storage.key(i);
      if ((key?.startsWith("tali.room.") && !keep.has(key)) || key?.startsWith("tali.hands.")) this.storage.removeItem(key);
    }
  }

  /** Forget what was kept of `room` (closed, or we were removed): nothing to come back to. */
  drop(player, room) {
    if (!player || !room) return;
    try {
      this.storage?.removeItem(`tali.room.${player}.${room}`);
    } catch {
      // storage refused: nothing kept anyway
    }
  }

  /** The rooms this browser kept something of for `player` (rooms it was in and did not leave). */
  keptRooms(player) {
    const prefix = `tali.room.${player}.`;
    const rooms = [];
    try {
      for (let i = 0; i < (this.storage?.length ?? 0); i += 1) {
        const key = this.storage.key(i);
        if (key?.startsWith(prefix)) rooms.push(key.slice(prefix.length));
      }
    } catch {
      // storage refused: nothing known
    }
    return rooms;
  }

  /** Remember players' names (`{player: name}`), for hands they played before leaving. */
  learnNames(names) {
    let changed = false;
    for (const [player, name] of Object.entries(names)) {
      if (this.names[player] !== name) {
        this.names[player] = name;
        changed = true;
      }
    }
    if (changed) this.save();
  }

  /** The entropy we sent with the roll that became event `seq` of `hand`. */
  recordSent(hand, seq, entropy) {
    (this.sent[hand] ??= {})[seq] = entropy;
    const hands = Object.keys(this.sent).map(Number).sort((a, b) => a - b);
    for (const old of hands.slice(0, Math.max(0, hands.length - KEPT))) delete this.sent[old];
    this.save();
  }

  /** Your stack after `hand` (and what you won in it), once per hand: the session's graph. */
  recordStack(hand, stack, won) {
    if (this.stacks.some(([h]) => h === hand)) return;
    this.stacks.push([hand, stack, won]);
    if (this.stacks.length > 500) this.stacks.splice(0, this.stacks.length - 500);
    this.save();
  }

  /** Keep a chat event (the latest CHAT of them). */
  recordChat(event) {
    this.chat.push({ type: "chat", room: event.room, seq: event.seq, player: event.player, name: event.name, text: event.text, at: event.at ?? null });
    if (this.chat.length > CHAT) this.chat.splice(0, this.chat.length - CHAT);
    this.save();
  }

  sentFor(hand) {
    return this.sent[hand] ?? {};
  }

  /**
   * A dice check of what this page saw that failed: kept, because after a reload the
   * page can only check the server's own record, which a cheating server makes agree
   * with itself (FAIRNESS.md §7: the dice to check are the ones the client saw).
   */
  recordFailure(hand, verdict) {
    this.failures[hand] = { status: "failed", problems: verdict.problems ?? [], source: "live" };
    const hands = Object.keys(this.failures).map(Number).sort((a, b) => a - b);
    for (const old of hands.slice(0, Math.max(0, hands.length - KEPT))) delete this.failures[old];
    this.save();
  }

  /**
   * Take hands from the server's `hand_history` (`[{hand, events, opening}]`),
   * replacing any shown for the same hands. `context` gives the room, who we
   * are and the settings; `asked`, the request: `{count, ended}` (hands over when asked).
   * Returns true when a hand we lack was counted past: the server counts "the last
   * `count` hands" back from the room's newest when it answers, and more hands may have
   * ended by then than when we asked, so the answer can start after a hand we wanted.
   */
  fill(hands, { room, you, settings }, asked = null) {
    const byHand = new Map(this.hands.map((r) => [r.hand, r]));
    for (const h of hands) {
      byHand.set(h.hand, { room, you, settings, names: { ...this.names }, hand: h.hand, events: h.events, opening: h.opening ?? null });
    }
    this.hands = [...byHand.values()].sort((a, b) => a.hand - b.hand).slice(-LIMIT);
    if (!asked || !hands.length) return false;
    const oldest = Math.min(...hands.map((h) => h.hand));
    const newest = Math.max(asked.ended, ...hands.map((h) => h.hand));
    const first = newest - asked.count + 1; // the oldest hand the answer could hold
    // Asked for but older than the oldest sent: the server no longer keeps them.
    for (let hand = Math.max(1, first); hand < oldest; hand += 1) if (!byHand.has(hand)) this.gone.add(hand);
    return this.lacking(newest).some((hand) => hand < first);
  }

  /** The hands of the room's latest LIMIT (`ended` are over) that we lack and may still get. */
  lacking(ended) {
    const held = new Set(this.hands.map((r) => r.hand));
    const lacking = [];
    for (let hand = Math.max(1, ended - LIMIT + 1); hand <= ended; hand += 1) {
      if (!held.has(hand) && !this.gone.has(hand)) lacking.push(hand);
    }
    return lacking;
  }

  /**
   * How many of the room's latest hands to ask for, now that `ended` are over: back to
   * the oldest we lack (not only to the newest held: an answer can leave a gap), or 0.
   */
  toAsk(ended) {
    const lacking = this.lacking(ended);
    return lacking.length ? Math.min(LIMIT, ended - lacking[0] + 1) : 0;
  }

  /** The hands to show, newest first. */
  finished() {
    return [...this.hands].reverse();
  }

  save() {
    if (!this.key || !this.storage) return;
    try {
      this.storage.setItem(this.key, JSON.stringify({ names: this.names, sent: this.sent, chat: this.chat, failures: this.failures, stacks: this.stacks }));
    } catch {
      // storage full or refused: kept in memory only
    }
  }
}

/**
 * Replay a record into what the history view shows: the log lines, the
 * results, each player's last dice, and a one-line summary.
 */
export function replay(record) {
  const players = record.events.find((e) => e.type === "hand_started")?.players ?? [];
  const ids = [...new Set([...players, ...Object.keys(record.names)])];
  const model = {
    you: record.you, settings: record.settings ?? { variant: record.variant }, names: { ...record.names },
    seats: ids.map((player, seat) => ({
      player, name: record.names[player] ?? (player === record.you ? "you" : "a player"), seat, stack: 0,
      ready: true, connected: true, in_hand: false, folded: false, dice: [], dice_count: 0, bet: 0, contributed: 0,
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
  const summary = top && !top.amount && !top.hand_name
    ? [`Hand ${record.hand}: `, { name: record.names[top.player] ?? (top.player === record.you ? "you" : "a player") }, " was the last one in, with nothing in the pot"]
    : top
    ? [`Hand ${record.hand}: `, { name: record.names[top.player] ?? (top.player === record.you ? "you" : "a player") }, ` won ${top.amount}${top.hand_name ? ` with ${top.hand_name}` : ""}`]
    : [`Hand ${record.hand}`];
  return { lines, results, dice, summary };
}
