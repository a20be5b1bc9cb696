// The sample client's entry point: it wires the protocol client, the state,
// the views and the input together. Where to look:
//
//   tali/            the client library (clients/js, copied): connect, requests,
//                    events, seq and resync, heartbeat, reconnect, fair dice
//   state.js         what the page knows, and how each server message changes it
//   room-model.js    a room kept current by its events; the hand log's lines
//   describe.js      the game in words (pots, awards, who sits out, what's next)
//   history.js       earlier hands (the server's hand_history), replayed for the panel
//   views/*.js       drawing: lobby, table, actions, panels (log, chat, history), rules
//   input.js         forms, buttons and keyboard shortcuts: everything that sends
//   alerts.js        "your turn": live region, tab title, optional sound
//   errors.js        every protocol error code in words

import { TaliClient } from "./tali/client.js";
import * as store from "./state.js";
import { createHandlers } from "./input.js";
import { $, keepFocus, nameNode, typing } from "./dom.js";
import { renderLobby } from "./views/lobby.js";
import { renderTable, tick } from "./views/table.js";
import { coachTip, firstControl, renderActions } from "./views/actions.js";
import { renderChat, renderHistory, renderLog, renderSession } from "./views/panels.js";
import { setUpRules } from "./views/rules.js";
import { setUpRanks } from "./views/ranks.js";
import { setUpAlerts, turnChanged } from "./alerts.js";
import { promptHint } from "./describe.js";
import { checkHand } from "./tali/fair-hand.js";
import { describeError } from "./errors.js";

// Batches (protocol 2.3): what one action brings this page arrives as one frame
// (`?batch=off` in the address asks for none).
const batch = new URLSearchParams(location.search).get("batch") !== "off";
const client = new TaliClient({ url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`, batch });
const state = store.createState();
const handlers = createHandlers({ client, state, render });
let turnKey = "";

const SCREENS = ["welcome", "lobby", "table", "replaced"]; // or "connecting": none of them
const NOT_CONNECTED = describeError({ code: "disconnected" }); // a connect or a request that the drop failed

// What the server sends is drawn once per frame it comes in, once every message of the
// frame is taken in: a batch brings all an action did (a showdown, its pots, the hand's
// end), and drawing the page after each of them laid out states no one ever saw (the pot
// at 57, then 6, then 0, all in one task), which the chips then flew from.
let drawing = false;
function renderSoon() {
  if (drawing) return;
  drawing = true;
  queueMicrotask(() => {
    drawing = false;
    render();
  });
}

function render() {
  keepFocus(() => {
    for (const id of SCREENS) $(id).hidden = id !== state.screen;
    drawNotice();
    if (state.screen === "lobby") renderLobby(state, handlers);
    if (state.screen === "table" && state.model) {
      renderTable(state, handlers);
      renderActions(state, handlers);
      renderCoach();
      renderLog(state);
      renderChat(state, render);
      renderSession(state);
      renderHistory(state);
    }
  });
  // A new decision: announce it, alert a background tab, and bring the focus to
  // the bar, but only if it is not somewhere the player put it.
  const prompt = state.screen === "table" ? store.currentPrompt(state) : null;
  const key = store.promptKey(prompt);
  if (key !== turnKey) {
    const fresh = prompt && (!turnKey || JSON.parse(turnKey)[3] !== prompt.deadline);
    turnKey = key;
    if (fresh || !prompt) turnChanged(prompt, prompt ? promptHint(prompt) : "");
    const active = document.activeElement;
    if (prompt && (!active || active === document.body) && !typing()) firstControl()?.focus({ preventScroll: true });
  }
  tick(state);
}

/** Whether the page is cut off from the server: the offline banner says so (the status handler). */
function away() {
  return client.status === "offline" || client.status === "reconnecting";
}

/**
 * The notice above the page, unless it only says what the offline banner says (a connect or a
 * request that failed for want of a connection): one message while offline, not two.
 */
function drawNotice() {
  const text = away() && state.notice === NOT_CONNECTED ? "" : state.notice;
  if ($("notice-text").textContent !== text) $("notice-text").textContent = text;
  $("notice").hidden = !text;
}

/**
 * A newcomer's first hand of each variant (each has its own decisions: betting, rerolls,
 * streets): a tip beside each decision, until that hand ends or "No more tips" (for all).
 */
function coaching() {
  const variant = state.model?.settings.variant;
  return !state.coachOff && Boolean(variant) && !state.coached.has(variant);
}

function renderCoach() {
  const tip = coaching() && state.model?.role === "player" ? coachTip(state, store.currentPrompt(state)) : "";
  $("coach").hidden = !tip;
  if ($("coach-text").textContent !== tip) $("coach-text").textContent = tip;
}

function remember(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // storage refused: it holds for this page only
  }
}

/** The first hand of this variant played through with tips: enough of them for it. */
function coachedVariant() {
  state.coached.add(state.model.settings.variant);
  remember("tali.coached-variants", JSON.stringify([...state.coached]));
}

function stopCoaching() {
  state.coachOff = true;
  remember("tali.coached", "1");
}

function coachedVariants() {
  try {
    const kept = JSON.parse(localStorage.getItem("tali.coached-variants") ?? "[]");
    return new Set(Array.isArray(kept) ? kept.filter((v) => typeof v === "string") : []);
  } catch {
    return new Set();
  }
}

// -- the dice check and the earlier hands ------------------------------------------

/**
 * Check a finished hand's dice (tali/fair-hand.js) and keep the verdict. Our own
 * entropy is checked when this page saw the hand, or this browser kept what it sent.
 */
async function checkDice(room, hand, events, opening, source) {
  const you = state.model?.you;
  const sent = state.history.sentFor(hand);
  const sentKnown = source === "live" || Object.keys(sent).length > 0;
  const verdict = await checkHand({ room, hand, you, events, opening, sent, sentKnown });
  if (store.diceChecked(state, room, hand, { ...verdict, source })) render();
}

/** The hand on the table, as this page saw it, once it is over (and again when our opening comes). */
function checkCurrent() {
  const hand = state.current;
  if (hand?.ended) checkDice(state.room, hand.number, hand.events, hand.opening, "live");
}

/**
 * Ask the server for the room's latest hands, as we saw them, for the panel; check their dice
 * too. An answer that counted past a hand we lack (more hands ended before the server
 * answered) is followed by another question, a few at most.
 */
async function loadHistory(hands, retries = 3) {
  const room = state.room;
  if (!hands || !state.model) return;
  const asked = { count: hands, ended: state.model.hands_played ?? 0 };
  // Arrived mid-hand (a reload): the hand so far too, as we saw it (protocol 2.2).
  const current = state.arrivedMidHand ? { current: true } : {};
  const reply = await client.request("hand_history", { room, hands, ...current }).catch(() => null);
  if (!reply || room !== state.room || !state.model) return;
  const counted = state.history.fill(reply.hands, { room, you: state.model.you, settings: state.model.settings }, asked);
  store.restoreLastHand(state);
  store.restoreCurrentHand(state, reply.current);
  render();
  for (const h of reply.hands) checkDice(room, h.hand, h.events, h.opening, "history");
  if (counted && retries > 0) loadHistory(state.history.toAsk(state.model.hands_played ?? 0), retries - 1);
}

// -- from the server -------------------------------------------------------------

client.on("status", ({ status }) => {
  const labels = {
    open: "online",
    connecting: "connecting…",
    reconnecting: "reconnecting…",
    offline: "offline: the server does not answer, reconnecting…",
    closed: "offline",
    replaced: "playing in another tab",
  };
  $("status").textContent = labels[status] ?? status;
  $("status").dataset.state = status;
  // Lost (a lapsed heartbeat, a dropped link): said loudly, once, and nothing to click meanwhile.
  $("offline").hidden = !away();
  $("actions").inert = away();
  drawNotice();
  if (status === "replaced") {
    state.screen = "replaced";
    render();
    $("play-here").focus();
  }
});

const RESTARTING = "The server is restarting: this page reconnects by itself, and you carry on where you were.";

client.on("welcome", (welcome) => {
  $("me").replaceChildren(nameNode(welcome.name));
  if (state.notice === RESTARTING || state.notice === NOT_CONNECTED) state.notice = ""; // back: said and done
  store.welcome(state, welcome);
  if (state.invited) {
    handlers.followInvite().then((went) => {
      if (!went && state.screen === "lobby") handlers.openLobby();
    });
  } else if (state.screen === "lobby") handlers.openLobby();
  render();
});

client.on("session_lost", () => {
  state.notice = "Your earlier visit had expired, so you start afresh in the lobby.";
});
client.on("server_shutdown", () => handlers.notice(RESTARTING));
// From the operator and the moderators (protocol 2.2).
client.on("notice", (message) => handlers.notice(`From the server's operator: ${message.text}`));
client.on("kicked", (message) => {
  // Not a seat given up while away (which a later visit would say): forget the room.
  state.history.drop(state.me?.playerId, message.room);
  handlers.notice(`You were removed from that table${message.reason ? `: ${message.reason}` : ""}.`);
});
client.on("room_closed", (message) => {
  state.history.drop(state.me?.playerId, message.room);
  handlers.notice(`That room was closed${message.reason ? `: ${message.reason}` : ""}.`);
  if (state.model && state.model.room === message.room) handlers.openLobby();
});
client.on("rewound", () =>
  handlers.notice("The server lost the last moves of this table; it is shown as it now stands."),
);
client.on("lobby_update", (update) => {
  store.lobbyUpdate(state, update);
  if (state.screen === "lobby") renderSoon();
});
client.on("snapshot", (snapshot) => {
  // A room entered (or reloaded, or resumed after missing events): its earlier hands from the server.
  const fresh = !state.model || state.model.room !== snapshot.room || snapshot.seq > state.model.seq;
  if (!store.snapshot(state, snapshot)) return;
  renderSoon();
  if (fresh) loadHistory(20);
});
client.on("room_event", (event) => {
  const what = store.roomEvent(state, event);
  if (what === "left") handlers.openLobby();
  else if (what) renderSoon();
  if (what && event.type === "hand_ended" && coaching() && state.model?.hand?.players.includes(state.model.you)) {
    coachedVariant();
    renderSoon();
  }
  if (what && event.type === "hand_ended") {
    checkCurrent();
    loadHistory(state.history.toAsk(Math.max(event.hand, state.model?.hands_played ?? 0)));
  }
});
client.on("dice_opened", (message) => {
  if (store.diceOpened(state, message)) checkCurrent();
});
client.on("your_turn", (prompt) => {
  if (store.yourTurn(state, prompt)) renderSoon();
});

// -- start -------------------------------------------------------------------------

setUpRanks(client, handlers.attempt);
$("loading").hidden = true; // every module loaded: the page works
// Opened from an invite link: into that room once we have a session (after the name, for a newcomer).
state.invited = store.inviteFromHash(location.hash);
window.addEventListener("hashchange", () => {
  state.invited = store.inviteFromHash(location.hash);
  if (state.invited && state.me && client.status === "open") handlers.followInvite();
});
setUpRules();
state.coachOff = localStorage.getItem("tali.coached") === "1";
state.coached = coachedVariants();
$("coach-off").addEventListener("click", () => {
  stopCoaching();
  render();
});
setUpAlerts();
handlers.bindForms();
handlers.bindKeys();
setInterval(() => tick(state), 250);

if (client.tokenStore.get()) {
  // Resume (this tab, another tab or an earlier visit): the seat is still ours.
  state.screen = "connecting";
  handlers.attempt(client.connect(localStorage.getItem("tali.name")), { keep: true });
} else {
  state.screen = "welcome";
}
render();
