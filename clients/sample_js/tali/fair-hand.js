// A copy of clients/js/src/fair-hand.js, made by `python -m server.devtools.client_facts`: edit the original.
// Checking a hand's dice against the server's commitments (protocol/FAIRNESS.md §7).
// The rolls checked are the ones this page saw in the hand's events, never a list
// the server sends with the opening: dice_rolled and rerolled as they arrived, the
// liars' dice the showdown revealed, the roll-offs. Our own rolls are checked with
// the entropy this client sent. fairness.js does the cryptography.

import { commitment as commitmentOf, effectiveEntropies, sourcesProblem, verify, verifyBot } from "./fairness.js";

/**
 * Every roll each player made in the hand, as seen in `events` (the hand's
 * events in order, from hand_started). `sent` maps the seq of our own
 * dice_rolled or rerolled to the entropy we sent with that action.
 * @param {any[]} events
 * @param {string} you
 * @param {Record<number, string>} [sent]
 */
export function rollsSeen(events, you, sent = {}) {
  /** @type {Map<string, {faces: number[] | null, entropy: string | null}[]>} */
  const rolls = new Map();
  const add = (/** @type {string} */ player, /** @type {{faces: number[] | null, entropy: string | null}} */ roll) => {
    const list = rolls.get(player) ?? [];
    list.push(roll);
    rolls.set(player, list);
  };
  for (const e of events) {
    const entropy = e.player === you ? sent[e.seq] ?? null : null;
    if (e.type === "dice_rolled") add(e.player, { faces: e.faces, entropy });
    else if (e.type === "rolled_in_secret") add(e.player, { faces: null, entropy: null }); // a liars' roll: four dice
    else if (e.type === "rerolled") add(e.player, { faces: [e.new], entropy });
    else if (e.type === "showdown") {
      for (const shown of e.hands) {
        // Liars' dice come out at the showdown: the one hidden roll is the dice shown.
        const hidden = (rolls.get(shown.player) ?? []).filter((r) => r.faces === null);
        if (hidden.length === 1) hidden[0].faces = shown.dice;
      }
    } else if (e.type === "roll_off") {
      for (const r of e.rolls) add(r.player, { faces: r.dice, entropy: null });
    }
  }
  return rolls;
}

/**
 * Check a finished hand. `events` runs from its hand_started to its hand_ended;
 * `opening` is our own opening when it came apart (dice_opened), or null.
 * `sent` maps the seq of each of our rolls to the entropy we sent with it;
 * with `sentKnown` false (a hand this browser did not play: another device),
 * our own rolls are checked with the entropy the opening names, like anyone's.
 * A bot's opening (entropy_from set) must list players dealt in, in turn order,
 * no bot among them, us included when we are not a bot; the entropy it lists
 * for us (and for anyone whose opening we hold) must be the one their first
 * roll used, and the bot's dice must follow from it (FAIRNESS.md §5). Each
 * person checks their own entry: that is what a bot's dice owe them.
 * Returns { status, problems, checked, mixed } where `mixed` says that our own
 * dice were checked with entropy we sent, and status is
 *   "verified"   every opening we hold opens its commitment and gives the dice we saw;
 *   "failed"     at least one did not (problems say whose and how);
 *   "waiting"    our own opening has not come yet (dice_opened follows hand_ended);
 *   "unchecked"  nothing to check (no dice were shown to us), or we missed the hand's start.
 *
 * @param {object} hand
 * @param {string} hand.room
 * @param {number} hand.hand
 * @param {string} hand.you  our player id
 * @param {any[]} hand.events
 * @param {import("../types/messages.js").DiceOpening | null} [hand.opening]
 * @param {Record<number, string>} [hand.sent]
 * @param {boolean} [hand.sentKnown]
 * @returns {Promise<{status: "verified" | "failed" | "waiting" | "unchecked", problems: {player: string | null, text: string}[], checked: number, mixed?: boolean, reason?: string}>}
 */
export async function checkHand({ room, hand, you, events, opening = null, sent = {}, sentKnown = true }) {
  const started = events.find((e) => e.type === "hand_started");
  const ended = events.find((e) => e.type === "hand_ended");
  if (!started || !ended) return { status: "unchecked", problems: [], checked: 0, reason: "partial" };
  const committed = new Map((started.commitments ?? []).map((c) => [c.player, c.commitment]));
  const rolls = rollsSeen(events, you, sent);
  /** @type {import("../types/messages.js").DiceOpening[]} */
  const openings = [...(ended.openings ?? [])];
  if (opening && !openings.some((o) => o.player === opening.player)) openings.push(opening);
  /** @type {{player: string | null, text: string}[]} */
  const problems = [];
  const problem = (/** @type {string | null} */ player, /** @type {string} */ text) => problems.push({ player, text });
  let mixed = false;

  const values = [...committed.values()];
  if (new Set(values).size !== values.length) problem(null, "two players were given the same commitment");

  // Bots' dice take the entropy of every person's first roll: what we know of it.
  const botIds = new Set(openings.filter((o) => Array.isArray(o.entropy_from)).map((o) => o.player));
  const known = new Map();
  for (const open of openings) {
    if (!botIds.has(open.player)) known.set(open.player, open.rolls[0]?.entropy ?? null);
  }
  const mine = rolls.get(you);
  if (sentKnown && mine?.length && !botIds.has(you)) known.set(you, mine[0].entropy ?? null);

  for (const open of openings) {
    const player = open.player;
    const published = committed.get(player);
    if (!published) {
      problem(player, "an opening came for a player with no commitment at the start of the hand");
      continue;
    }
    if (open.commitment !== published) {
      problem(player, "the opening names another commitment than the one published when the hand began");
    }
    const opens = await commitmentOf(open.secret).then((c) => c === published, () => false);
    if (!opens) {
      problem(player, "the secret does not open the commitment published when the hand began");
      continue;
    }
    const seen = rolls.get(player) ?? [];
    if (seen.some((r) => r.faces === null)) continue; // dice we never saw: nothing to compare
    if (seen.length !== open.rolls.length) {
      problem(player, `the opening lists ${open.rolls.length} rolls, but ${seen.length} were seen`);
      continue;
    }
    if (Array.isArray(open.entropy_from)) {
      // A bot: no entropy of its own; its dice take the table entropy of the people's.
      const listed = open.entropy_from.map((source) => source.player);
      // The people, in turn order: those dealt in whom it lists (a player it leaves out
      // is a bot, or has the omission to complain of: we check our own entry).
      const people = (started.players ?? []).filter((p) => listed.includes(p) && !botIds.has(p));
      const wrong = sourcesProblem(open.entropy_from, people, known);
      if (wrong) problem(player, `the bot's entropy is not the people's: ${wrong}`);
      if (known.has(you) && !listed.includes(you)) problem(player, "the bot's entropy leaves out your own");
      const ok = await verifyBot({
        commitment: published, secret: open.secret, room, hand, player,
        rolls: seen.map((r) => r.faces), entropyFrom: open.entropy_from,
      });
      if (!ok) problem(player, "the bot's dice do not follow from its secret and the people's entropy");
      continue;
    }
    let entropies;
    if (player === you && sentKnown) {
      // Ours: the entropy we sent, and the opening must say the same was used.
      entropies = effectiveEntropies(seen.map((r) => r.entropy));
      mixed = entropies.some((entropy) => entropy !== null);
      if (entropies.some((entropy, i) => entropy !== (open.rolls[i].entropy ?? null))) {
        problem(player, "your own entropy was not used for them");
      }
    } else {
      entropies = open.rolls.map((r) => r.entropy ?? null);
    }
    const ok = await verify({
      commitment: published, secret: open.secret, room, hand, player,
      rolls: seen.map((r, i) => ({ faces: r.faces, entropy: entropies[i] })),
    });
    if (!ok) problem(player, "the dice shown do not follow from the secret and the entropy");
  }

  // Dice shown to everyone must be opened to everyone; ours to us.
  const opened = new Set(openings.map((o) => o.player));
  for (const [player, seen] of rolls) {
    if (opened.has(player) || !committed.has(player)) continue;
    if (player === you) {
      if (!problems.length) return { status: "waiting", problems, checked: opened.size, mixed };
      continue;
    }
    if (seen.every((r) => r.faces !== null)) problem(player, "their dice were shown, but their secret was not opened");
  }
  if (problems.length) return { status: "failed", problems, checked: opened.size, mixed };
  return { status: opened.size ? "verified" : "unchecked", problems, checked: opened.size, mixed, reason: opened.size ? "" : "nothing shown" };
}

/**
 * @typedef {object} FairVerdict
 * @property {string} room
 * @property {number} hand
 * @property {"verified" | "failed" | "unchecked"} status
 * @property {{player: string | null, text: string}[]} problems
 */

/**
 * Checks every hand a client plays or watches, as it ends: it keeps each hand's
 * events as they arrive, the entropy the client sent with its own rolls, and our
 * own opening when it comes apart (`dice_opened`), and calls `onVerdict` once per
 * hand. Usage: `new FairDiceChecker(client, (verdict) => ...)`.
 */
export class FairDiceChecker {
  /**
   * @param {{on: (type: any, handler: (message: any) => void) => () => void, playerId: string | null}} client
   *   a TaliClient
   * @param {(verdict: FairVerdict) => void} onVerdict
   */
  constructor(client, onVerdict) {
    this.client = client;
    this.onVerdict = onVerdict;
    /** @type {Map<string, {hand: number, events: any[], sent: Record<number, string>}>} */
    this.hands = new Map();
    /** @type {Map<string, string>} the entropy of our roll in flight, by room */
    this.pending = new Map();
    /** @type {Map<string, {room: string, hand: number, events: any[], sent: Record<number, string>}>} */
    this.waiting = new Map();
    this.off = [
      client.on("sent", (message) => this._sent(message)),
      client.on("room_event", (event) => this._event(event)),
      client.on("dice_opened", (message) => this._opened(message)),
    ];
  }

  /** Stop listening. */
  close() {
    for (const off of this.off) off();
  }

  /** @param {any} message */
  _sent(message) {
    if ((message.type === "roll" || message.type === "reroll") && message.entropy) {
      this.pending.set(message.room, message.entropy);
    }
  }

  /** @param {any} event */
  _event(event) {
    const you = this.client.playerId;
    if (event.type === "hand_started") {
      this.hands.set(event.room, { hand: event.hand, events: [event], sent: {} });
      return;
    }
    const current = this.hands.get(event.room);
    if (!current) return; // we came in mid-hand: nothing to check it against
    current.events.push(event);
    if (event.player === you && (event.type === "dice_rolled" || event.type === "rerolled")) {
      const entropy = this.pending.get(event.room);
      if (entropy) current.sent[event.seq] = entropy;
      this.pending.delete(event.room);
    } else if (event.player === you && event.type === "timed_out") {
      this.pending.delete(event.room); // the server rolled for us: not with this entropy
    }
    if (event.type === "hand_ended") {
      this.hands.delete(event.room);
      void this._check({ room: event.room, ...current }, null);
    }
  }

  /** @param {import("../types/messages.js").DiceOpened} message */
  _opened(message) {
    const key = `${message.room}/${message.hand}`;
    const held = this.waiting.get(key);
    if (!held) return;
    this.waiting.delete(key);
    void this._check(held, message.opening);
  }

  /**
   * @param {{room: string, hand: number, events: any[], sent: Record<number, string>}} held
   * @param {import("../types/messages.js").DiceOpening | null} opening
   */
  async _check(held, opening) {
    const you = this.client.playerId ?? "";
    const verdict = await checkHand({ ...held, you, opening });
    if (verdict.status === "waiting") {
      this.waiting.set(`${held.room}/${held.hand}`, held);
      return;
    }
    this.onVerdict({ room: held.room, hand: held.hand, status: verdict.status, problems: verdict.problems });
  }
}
