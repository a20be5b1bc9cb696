// The client's state, and how each server message changes it. No DOM and no
// sending here: app.js feeds messages in, the views read the state out, and
// input.js sends requests. Reading this file tells what the page knows.

import { applyEvent } from "./room-model.js";
import { describeAward, live } from "./describe.js";
import { HandHistory, replay } from "./history.js";

// The events that make up a hand's story (chat and comings and goings do not).
const HAND_EVENTS = new Set([
  "hand_started", "ante_paid", "dice_rolled", "rolled_in_secret", "draw_round_started", "street_started",
  "timed_out", "checked", "bet_placed", "folded", "bet_returned", "rerolled", "passed", "showdown",
  "roll_off", "pot_awarded", "hand_ended",
]);

export function createState(storage = globalThis.localStorage) {
  return {
    screen: "welcome", // welcome | lobby | table | replaced
    me: null, // { playerId, name, roles }
    notice: "", // the latest problem, in words
    noticeRefusal: false, // whether it says why a request was refused (the next success clears it)
    lobby: { rooms: new Map(), variant: "", hasSeat: false, nextCursor: null },
    room: null, // the room on screen
    joining: null, // the room a join_room is on its way to
    model: null, // its snapshot, kept current by events (room-model.js)
    prompt: null, // our latest your_turn there, while it holds
    log: [], // this hand's log lines
    logEpoch: 0, // bumped when the log starts afresh
    chat: [], // chat events of this room
    chatEpoch: 0,
    results: [], // this hand's award lines
    rollOffs: [], // this hand's roll_off events
    history: new HandHistory(storage), // earlier hands (the server's hand_history), names, sent entropy
    current: null, // the hand on the table as this page saw it, from its start: { number, events, opening }
    verdicts: new Map(), // hand number -> its dice check (tali/fair-hand.js), in the room on screen
    outgoing: null, // the entropy of our roll or reroll in flight: { key, room, hand, entropy }
    clockOffset: 0, // server clock minus ours, learnt from prompts
    timerTotals: new Map(), // deadline -> the whole turn's length in ms, for the time bars
    lastError: "", // the code of the latest refusal
    arrivedMidHand: null, // { hand, seq }: this page arrived in a hand; its log so far is to come
    invited: null, // { room, invite } from the invite link this page was opened with
    inviteCopied: "", // what became of "Copy link"
    botChoice: { level: "expert", speed: "normal" }, // the next bot the creator adds
    muted: new Set(loadMuted(storage)), // player ids whose chat this browser hides
  };
}

function loadMuted(storage) {
  try {
    const list = JSON.parse(storage?.getItem("tali.muted") ?? "[]");
    return Array.isArray(list) ? list.filter((p) => typeof p === "string") : [];
  } catch {
    return [];
  }
}

/** Mute (or unmute) a player's chat, in this browser; the chat is drawn afresh. */
export function toggleMute(state, player, storage = globalThis.localStorage) {
  if (state.muted.has(player)) state.muted.delete(player);
  else state.muted.add(player);
  state.chatEpoch += 1;
  try {
    storage?.setItem("tali.muted", JSON.stringify([...state.muted]));
  } catch {
    // kept for this page only
  }
}

/** An invite link's room and invite (`#room=…&invite=…`), or null. */
export function inviteFromHash(hash) {
  const fields = new URLSearchParams(String(hash ?? "").replace(/^#/, ""));
  const room = fields.get("room");
  const invite = fields.get("invite");
  if (!room || !/^[A-Za-z0-9_-]{1,64}$/.test(room)) return null;
  if (invite !== null && !/^[A-Za-z0-9_-]{16,64}$/.test(invite)) return null;
  return { room, invite };
}

/** The link that brings someone straight into `room` (the invite rides in the fragment: never sent to a server). */
export function inviteLink(base, room, invite) {
  const fields = new URLSearchParams({ room });
  if (invite) fields.set("invite", invite);
  return `${base}#${fields}`;
}

/** The server's clock, as well as we know it. */
export function serverNow(state) {
  return Date.now() + state.clockOffset;
}

/**
 * A whole turn at this table, in ms of the server's clock: the snapshot says it (a
 * server may run its timers faster than the room's settings say); an older server
 * does not, and the setting is the best guess.
 */
export function turnMs(state) {
  const m = state.model;
  return Math.round((m?.seconds_per_turn ?? m?.settings.turn_seconds ?? 30) * 1000);
}

/** Milliseconds left until a deadline on the server's clock. */
export function msLeft(state, deadline) {
  return deadline - serverNow(state);
}

function learnTimer(state, deadline, fromSnapshot = false) {
  if (!deadline || state.timerTotals.has(deadline)) return;
  // Seen as the decision began: the time left is the whole turn. Seen later (a
  // reload), the room's turn length is the best guess.
  const total = fromSnapshot ? turnMs(state) : msLeft(state, deadline);
  state.timerTotals.set(deadline, Math.max(1, total));
  if (state.timerTotals.size > 64) state.timerTotals.delete(state.timerTotals.keys().next().value);
}

function learnClock(state, prompt) {
  state.clockOffset = prompt.deadline - (Date.now() + prompt.seconds_left * 1000);
}

// -- session -----------------------------------------------------------------

export const SEAT_GIVEN_UP =
  "You were away longer than the table waits: your place there was given up, with the chips you had on the table, and you are back in the lobby. Sit down again for a fresh stack.";

export function welcome(state, message) {
  // A room this browser was in (and did not leave) that the session is no longer in: the
  // seat was given up while we were away (the room's reconnect grace ran out).
  const resumed = state.me === null || state.me.playerId === message.player_id;
  const lost = resumed && state.history.keptRooms(message.player_id)
    .some((room) => !message.rooms.includes(room) && room !== state.joining);
  if (lost && !message.rooms.length) state.notice = SEAT_GIVEN_UP;
  state.me = { playerId: message.player_id, name: message.name, roles: message.roles ?? [] };
  state.history.prune(message.player_id, message.rooms);
  if (state.room && (message.rooms.includes(state.room) || state.joining === state.room)) {
    // Back after a drop or a takeover (the room's snapshot follows: keep its log and chat),
    // or moved to another node on the way into a room (the join is sent again there).
  } else if (message.rooms.length) {
    enterRoom(state, message.rooms[0]); // its snapshot follows
  } else {
    leaveRoom(state);
  }
}

// -- lobby -------------------------------------------------------------------

export function roomList(state, list, { append = false } = {}) {
  if (!append) state.lobby.rooms = new Map();
  for (const summary of list.rooms) state.lobby.rooms.set(summary.room, summary);
  state.lobby.nextCursor = list.next_cursor ?? null;
}

/**
 * Apply a lobby_update: closed rooms go; changed rooms are updated. A room not
 * listed yet lies on a page still to come (the list is oldest first), so it is
 * added only once the list is complete; until then "more rooms" brings it.
 */
export function lobbyUpdate(state, update) {
  const lobby = state.lobby;
  for (const room of update.removed) lobby.rooms.delete(room);
  for (const summary of update.changed) {
    if (lobby.rooms.has(summary.room) || !lobby.nextCursor) lobby.rooms.set(summary.room, summary);
  }
}

/** Rooms that pass the lobby's filters (the server filters each page; updates are filtered here). */
export function shownRooms(state) {
  const { variant, hasSeat } = state.lobby;
  return [...state.lobby.rooms.values()].filter((room) =>
    (!variant || room.settings.variant === variant) &&
    (!hasSeat || room.seats_taken < room.settings.max_players));
}

// -- rooms -------------------------------------------------------------------

export function enterRoom(state, room) {
  if (state.room !== room) {
    state.chat = [];
    state.chatEpoch += 1;
    state.verdicts = new Map();
    state.current = null;
  }
  state.room = room;
  state.model = null;
  state.prompt = null;
  resetHand(state);
}

export function leaveRoom(state) {
  state.room = null;
  state.inviteCopied = "";
  state.model = null;
  state.prompt = null;
  state.chat = [];
  state.chatEpoch += 1;
  state.verdicts = new Map();
  state.current = null;
  resetHand(state);
  state.history.forget();
  state.screen = "lobby";
}

function resetHand(state) {
  state.log = [];
  state.logEpoch += 1;
  state.results = [];
  state.rollOffs = [];
}

export function snapshot(state, message) {
  if (message.room !== state.room) return false;
  const first = !state.model;
  const missed = !first && message.seq > state.model.seq;
  state.model = message;
  state.prompt = message.your_turn ?? null;
  if (state.prompt) {
    learnClock(state, state.prompt);
    learnTimer(state, state.prompt.deadline, true);
  }
  if (message.hand?.deadline) learnTimer(state, message.hand.deadline, true);
  state.history.open(message.you, message.room);
  // A dice check that failed on what this page saw, before a reload: it stays failed.
  for (const [hand, verdict] of Object.entries(state.history.failures)) {
    if (state.verdicts.get(Number(hand))?.status !== "failed") state.verdicts.set(Number(hand), { ...verdict });
  }
  // A fresh page (a reload, a reopened tab): the chat this browser kept, up to the snapshot.
  if (first && !state.chat.length) state.chat = state.history.chat.filter((c) => c.seq <= message.seq);
  state.history.learnNames(Object.fromEntries(message.seats.map((s) => [s.player, s.name])));
  if (first && live(message)) {
    state.log = [[`Hand ${message.hand.number} in progress when you arrived`]];
    // Until the server's record of the hand so far replaces this line (restoreCurrentHand).
    state.arrivedMidHand = { hand: message.hand.number, seq: message.seq };
  } else if (first) state.arrivedMidHand = null;
  if (missed) state.log.push(["The table is up to date again (some lines of this log may be missing)."]);
  // Events were missed: this hand can no longer be checked from what we saw (the server's record can).
  if (first || missed) state.current = null;
  state.screen = "table";
  return true;
}

/** Apply a room event; returns "left" when it took us out of the room. */
export function roomEvent(state, event) {
  if (event.room !== state.room || !state.model) return null;
  if (event.type === "chat") {
    state.chat.push(event);
    state.history.recordChat(event);
    if (state.chat.length > 200) state.chat.splice(0, state.chat.length - 200);
    return "chat";
  }
  const model = state.model;
  if (event.type === "hand_started") {
    resetHand(state);
    state.prompt = null;
    state.current = { number: event.hand, events: [], opening: null };
  }
  if (HAND_EVENTS.has(event.type) && state.current && !state.current.ended) state.current.events.push(event);
  if (event.type === "hand_ended" && state.current) state.current.ended = true;
  if (event.type === "player_joined") state.history.learnNames({ [event.player]: event.name });
  if (event.player === model.you) ownRoll(state, event);
  if (event.type === "waiting_for") {
    learnTimer(state, event.deadline);
    if (!event.players.includes(model.you)) state.prompt = null;
  }
  if ((event.type === "timed_out" || event.type === "folded") && event.player === model.you) state.prompt = null;
  if (event.type === "roll_off") state.rollOffs.push(event);
  const award = event.type === "pot_awarded" || event.type === "bet_returned" ? describeAward(model, event, state.rollOffs) : null;
  state.log.push(...applyEvent(model, event));
  if (state.log.length > 300) state.log.splice(0, state.log.length - 300);
  if (award) state.results.push(award);
  if (event.type === "hand_ended") {
    state.prompt = null;
    // This evening's graph: our stack after every hand we were dealt into.
    const me = model.seats.find((s) => s.player === model.you);
    if (me && state.current?.number === event.hand && state.current.events.some((e) => e.type === "hand_started" && e.players.includes(model.you))) {
      const won = state.current.events.filter((e) => e.type === "pot_awarded" && e.player === model.you).reduce((sum, e) => sum + e.amount, 0);
      state.history.recordStack(event.hand, me.stack, won);
    }
  }
  if (event.type === "player_left" && event.player === model.you) {
    leaveRoom(state);
    return "left";
  }
  return "event";
}

/**
 * Our own dice events: the entropy we sent goes with the roll or reroll it
 * made (kept by seq, for the dice check); after a timeout, the timer rolled.
 */
function ownRoll(state, event) {
  const out = state.outgoing;
  if (event.type === "timed_out") state.outgoing = null;
  if ((event.type !== "dice_rolled" && event.type !== "rerolled") || !out) return;
  if (out.room === event.room && out.hand === state.model.hand?.number) state.history.recordSent(out.hand, event.seq, out.entropy);
  state.outgoing = null;
}

/**
 * The entropy to send with a roll or reroll for `prompt`: fresh (from `make`)
 * for each new decision, the same again when the same decision is sent again
 * (protocol/FAIRNESS.md §7, step 2).
 */
export function entropyFor(state, prompt, make) {
  const key = promptKey(prompt);
  if (state.outgoing?.key !== key) state.outgoing = { key, room: prompt.room, hand: prompt.hand, entropy: make() };
  return state.outgoing.entropy;
}

/**
 * After a reload between hands the log is empty: fill it, the results and the
 * roll-offs from the server's record of the hand on the table, if it has it.
 */
export function restoreLastHand(state) {
  const m = state.model;
  if (!m?.hand || live(m) || state.log.length || state.results.length) return false;
  const record = state.history.hands.find((r) => r.hand === m.hand.number);
  if (!record) return false;
  const shown = replay(record);
  state.log = shown.lines;
  state.results = shown.results;
  state.rollOffs = record.events.filter((e) => e.type === "roll_off");
  return true;
}

/**
 * A page that arrived mid-hand (a reload): the hand's log so far, from the server's
 * record as this player saw it (`hand_history` with `current`). Events up to the
 * snapshot's seq are replayed; later ones reached the log live, after the placeholder.
 */
export function restoreCurrentHand(state, current) {
  const arrived = state.arrivedMidHand;
  const m = state.model;
  if (!arrived || !current || current.hand !== arrived.hand || m?.hand?.number !== arrived.hand) return false;
  state.arrivedMidHand = null;
  const events = current.events.filter((e) => e.seq <= arrived.seq);
  if (!events.length) return false;
  const names = { ...state.history.names, ...Object.fromEntries(m.seats.map((s) => [s.player, s.name])) };
  const shown = replay({ room: m.room, you: m.you, settings: m.settings, names, hand: current.hand, events, opening: null });
  state.log = [...shown.lines, ...state.log.slice(1)];
  state.logEpoch += 1;
  return true;
}

/** Our own opening (dice_opened), for a hand whose dice stayed hidden. */
export function diceOpened(state, message) {
  if (message.room !== state.room) return false;
  if (state.current?.number === message.hand) state.current.opening = message.opening;
  return true;
}

/**
 * A dice check's result for a hand. A failure stays; a check from what this
 * page saw ("live") outranks one from the server's record ("history").
 */
export function diceChecked(state, room, hand, verdict) {
  if (room !== state.room) return false;
  const before = state.verdicts.get(hand);
  const settled = (v) => v && (v.status === "verified" || v.status === "failed");
  if (before?.status === "failed") return false;
  if (verdict.status !== "failed" && settled(before) && !(verdict.source === "live" && settled(verdict))) return false;
  state.verdicts.set(hand, verdict);
  if (verdict.status === "failed" && verdict.source === "live") state.history.recordFailure(hand, verdict);
  return true;
}

/** The hands whose dice check failed, oldest first. */
export function failedHands(state) {
  return [...state.verdicts.entries()].filter(([, v]) => v.status === "failed").sort((a, b) => a[0] - b[0]);
}

export function yourTurn(state, prompt) {
  if (prompt.room !== state.room) return false;
  state.prompt = prompt;
  learnClock(state, prompt);
  learnTimer(state, prompt.deadline);
  return true;
}

/** Our prompt, if it still holds for the hand on the table. */
export function currentPrompt(state) {
  const m = state.model;
  if (!m || !live(m) || !state.prompt || state.prompt.hand !== m.hand.number) return null;
  return state.prompt;
}

/** A key that changes exactly when the decision asked of us changes. */
export function promptKey(prompt) {
  return prompt ? JSON.stringify([prompt.room, prompt.hand, prompt.phase, prompt.deadline, prompt.legal]) : "";
}

/**
 * Whether we may moderate the room on screen: we made it (its snapshot's `creator`, which
 * every snapshot carries, a resumed page's too), or we are a moderator (or admin).
 */
export function mayModerate(state) {
  const m = state.model;
  return Boolean(m && m.room === state.room && m.creator && m.creator === m.you) || (state.me?.roles ?? []).length > 0;
}
