// The sample client's UI. It talks to the server only through tali-client.js,
// exactly as a third-party client would. Everything a player or the server
// wrote (names, chat) is put in the page as text, never as markup.

import { TaliClient } from "./tali-client.js";
import { applyEvent } from "./room-model.js";
import { SETTING_BOUNDS, SETTING_DEFAULTS } from "./facts.js";
import { rollName } from "./scoring.js";

const client = new TaliClient({ url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/` });
const state = {
  room: null, // the room on screen
  model: null, // its snapshot, kept current by events
  prompt: null, // our latest your_turn, while it holds
  log: [],
  chat: [],
  result: [],
  rollOffs: new Map(), // pot -> the last roll_off for it this hand
  rooms: new Map(),
  clockOffset: 0, // server clock minus ours, learnt from prompts
  sessionLost: false,
};
const $ = (id) => document.getElementById(id);

/** Build an element; string children become text nodes, never HTML. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function show(screen) {
  for (const id of ["welcome", "lobby", "table"]) $(id).hidden = id !== screen;
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

async function attempt(promise) {
  try {
    notice("");
    return await promise;
  } catch (error) {
    notice(error.code === "disconnected" ? "Not connected; retrying…" : error.message);
    return null;
  }
}

// -- connection --------------------------------------------------------------

client.on("status", ({ status }) => {
  const labels = { open: "online", connecting: "connecting…", reconnecting: "reconnecting…", closed: "offline", replaced: "opened elsewhere" };
  $("status").textContent = labels[status] ?? status;
  $("status").dataset.state = status;
  if (status === "replaced") notice("This session continues in another tab or window.");
});

client.on("welcome", (welcome) => {
  $("me").textContent = welcome.name;
  if (welcome.rooms.length) {
    state.room = welcome.rooms[0]; // its snapshot follows
    show("table");
  } else {
    state.room = null;
    state.model = null;
    openLobby().then(() => {
      if (state.sessionLost) notice("Your earlier session had expired; you are in the lobby again.");
      state.sessionLost = false;
    });
  }
});

client.on("server_shutdown", (message) => notice(`The server is stopping: ${message.reason}`));
client.on("session_lost", () => {
  state.sessionLost = true;
});

// -- lobby ---------------------------------------------------------------------

async function openLobby() {
  show("lobby");
  history.replaceState(null, "", location.pathname);
  await attempt(client.request("subscribe_lobby"));
  const list = await attempt(client.request("list_rooms"));
  if (list) state.rooms = new Map(list.rooms.map((r) => [r.room, r]));
  renderLobby();
}

client.on("lobby_update", (update) => {
  for (const room of update.removed) state.rooms.delete(room);
  for (const summary of update.changed) state.rooms.set(summary.room, summary);
  renderLobby();
});

function variantLabel(settings) {
  const names = { simple: "Simple", liars: "Liars'", draw: "Draw", stud: "Stud" };
  const betting = settings.betting_structure ? ` (${settings.betting_structure.replace("_", " ")})` : "";
  return `${names[settings.variant]}${betting}`;
}

function renderLobby() {
  const list = $("room-list");
  list.replaceChildren();
  if (!state.rooms.size) list.append(el("li", { class: "empty" }, "No rooms yet: open one below."));
  for (const room of state.rooms.values()) {
    const s = room.settings;
    list.append(
      el("li", { "data-testid": `room-${room.room}` },
        el("strong", {}, variantLabel(s)),
        ` · ${room.seats_taken}/${s.max_players} seated`,
        room.bots?.some(Boolean) ? ` (${room.bots.filter(Boolean).length} computer)` : "",
        ` · ${room.spectators} watching · ante ${s.ante} · `,
        room.state === "in_hand" ? "playing" : "waiting",
        " ",
        el("button", { "data-testid": `join-${room.room}`, onclick: () => join(room.room, "player"), disabled: room.seats_taken >= s.max_players }, "Sit down"),
        el("button", { "data-testid": `watch-${room.room}`, onclick: () => join(room.room, "spectator") }, "Watch"),
      ),
    );
  }
}

function syncCreateForm() {
  const form = $("create-form");
  const variant = form.variant.value;
  const fixed = variant === "liars" && form.betting_structure.value === "fixed_limit";
  for (const label of form.querySelectorAll("[data-for]")) {
    const wanted = label.dataset.for;
    label.hidden = !(wanted === variant || (wanted === "fixed_limit" && fixed));
  }
}

// The settings' bounds and defaults come from the server's own (facts.js), not from the page.
for (const [name, [min, max]] of Object.entries(SETTING_BOUNDS)) {
  const input = $("create-form").elements[name];
  if (!input) continue;
  input.min = String(min);
  input.max = String(max);
  if (name in SETTING_DEFAULTS) input.value = String(SETTING_DEFAULTS[name]);
}
$("create-form").addEventListener("change", syncCreateForm);
$("create-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const settings = { variant: form.variant.value };
  for (const input of form.querySelectorAll("input, select")) {
    if (input.name === "variant" || input.closest("label")?.hidden || input.value === "") continue;
    settings[input.name] = input.type === "number" ? Number(input.value) : input.value;
  }
  const created = await attempt(client.request("create_room", { settings }));
  if (created) await join(created.room, "player");
});

// "Play against the computer": one click to a table of three bots, in the variant
// chosen in the form below (the room and its bots are the creator's, as for anyone).
const COMPUTER_OPPONENTS = 3;
$("play-bots").addEventListener("click", async () => {
  const variant = $("create-form").variant.value;
  const created = await attempt(client.request("create_room", { settings: { variant, max_players: COMPUTER_OPPONENTS + 1 } }));
  if (!created) return;
  await join(created.room, "player");
  for (let i = 0; i < COMPUTER_OPPONENTS; i += 1) {
    if (!(await attempt(client.request("add_bot", { room: created.room, level: "expert" })))) break;
  }
});

async function join(room, role) {
  state.room = room;
  state.model = null;
  const joined = await attempt(client.request("join_room", { room, role }));
  if (!joined) {
    state.room = null;
    return;
  }
  await attempt(client.request("unsubscribe_lobby"));
  show("table");
}

// -- the table --------------------------------------------------------------------

client.on("snapshot", (snapshot) => {
  if (snapshot.room !== state.room) return;
  state.model = snapshot;
  state.prompt = snapshot.your_turn ?? null;
  if (state.prompt) learnClock(state.prompt);
  show("table");
  render();
});

client.on("room_event", (event) => {
  if (event.room !== state.room || !state.model) return;
  if (event.type === "chat") {
    state.chat.push(event);
    renderChat();
    return;
  }
  if (event.type === "hand_started") {
    state.log = [];
    state.result = [];
    state.rollOffs = new Map();
    state.prompt = null;
  }
  if (event.type === "waiting_for" && !event.players.includes(client.playerId)) state.prompt = null;
  if (event.type === "timed_out" && event.player === client.playerId) state.prompt = null;
  const line = applyEvent(state.model, event);
  if (line) state.log.push(...line.split("\n"));
  if (event.type === "roll_off") state.rollOffs.set(event.pot, event);
  if (event.type === "pot_awarded") state.result.push(describeAward(event));
  if (event.type === "player_left" && event.player === client.playerId) {
    state.room = null;
    openLobby();
    return;
  }
  render();
});

client.on("your_turn", (prompt) => {
  if (prompt.room !== state.room) return;
  state.prompt = prompt;
  learnClock(prompt);
  render();
});

function learnClock(prompt) {
  state.clockOffset = prompt.deadline - (Date.now() + prompt.seconds_left * 1000);
}

function nameOf(player) {
  return state.model?.seats.find((s) => s.player === player)?.name ?? "someone";
}

function describeAward(award) {
  const pot = state.model.hand?.pots[award.pot];
  const winner = nameOf(award.player);
  if (!award.hand_name) return `${winner} wins ${award.amount}: nobody else was left in.`;
  // After a roll-off, the last roll-off decided; otherwise the dice on the table did.
  const rollOff = state.rollOffs.get(award.pot);
  const beaten = rollOff
    ? rollOff.rolls.filter((r) => r.player !== award.player).map((r) => `${nameOf(r.player)}'s ${r.hand_name}`)
    : (pot?.eligible ?? [])
        .filter((p) => p !== award.player)
        .map((p) => state.model.seats.find((s) => s.player === p))
        .filter((s) => s && s.dice && s.dice.length === 4)
        .map((s) => `${s.name}'s ${rollName(s.dice)}`);
  const label = state.model.hand?.pots.length > 1 ? (award.pot === 0 ? "the main pot" : `side pot ${award.pot}`) : "the pot";
  const how = rollOff ? " in a roll-off" : "";
  return `${winner} wins ${label} (${award.amount}) with ${award.hand_name}${how}` + (beaten.length ? `: ${award.hand_name} beats ${beaten.join(", ")}.` : ".");
}

const PIPS = { 1: [5], 2: [1, 9], 3: [1, 5, 9], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] };

function die(face, attrs = {}) {
  const node = el("span", { class: "die", "data-face": face, role: "img", "aria-label": `die showing ${face}`, ...attrs });
  for (let cell = 1; cell <= 9; cell += 1) node.append(el("i", { class: PIPS[face].includes(cell) ? "pip" : "" }));
  return node;
}

function render() {
  const m = state.model;
  if (!m) return;
  const hand = m.hand;
  const me = m.seats.find((s) => s.player === client.playerId);
  const liars = m.settings.variant === "liars";
  const live = hand && hand.phase !== "complete";
  const prompt = live && state.prompt && state.prompt.hand === hand.number ? state.prompt : null;

  const head = $("table-head");
  head.replaceChildren(
    el("h2", {}, `${variantLabel(m.settings)} · ante ${m.settings.ante}`),
    el("p", {},
      hand ? `Hand ${hand.number} · ${live ? hand.phase.replace("_", " ") : "finished"}` : "Waiting for players",
      hand && live && hand.street ? ` · street ${hand.street}` : "",
      hand && live && hand.draw_round ? ` · draw round ${hand.draw_round}` : "",
      hand ? el("span", { "data-testid": "pot" }, ` · pot ${hand.pot}`) : "",
      ` · ${m.spectators} watching`,
      m.role === "spectator" ? " · you are watching" : "",
    ),
    m.next_hand_at && !live ? el("p", {}, "Next hand in ", el("span", { class: "countdown", "data-deadline": m.next_hand_at }), " s") : "",
    el("div", { class: "controls" },
      me ? el("button", { "data-testid": "toggle-ready", onclick: () => attempt(client.request("set_ready", { room: m.room, ready: !me.ready })) }, me.ready ? "Sit out next hands" : "Sit in") : "",
      el("button", { "data-testid": "leave", onclick: leave }, "Leave the room"),
    ),
  );

  const seats = $("seats");
  seats.replaceChildren();
  for (const seat of m.seats) {
    const mine = seat.player === client.playerId;
    const turn = live && hand.to_act.includes(seat.player);
    const rerollable = mine && prompt?.legal.actions.includes("reroll");
    const dice = el("div", { class: "dice", "data-testid": `dice-${seat.player}` });
    if (seat.dice) {
      seat.dice.forEach((face, i) => {
        const hidden = liars && mine && live && !hand.winners.length;
        const attrs = { "data-testid": `die-${seat.player}-${i}`, class: `die${hidden ? " private" : ""}` };
        if (rerollable) {
          dice.append(el("button", { class: "reroll", "data-testid": `reroll-${i}`, title: `Reroll this ${face} for ${prompt.legal.reroll_cost}`, onclick: () => act("reroll", { die: i }) }, die(face, attrs)));
        } else dice.append(die(face, attrs));
      });
      if (liars && mine && live && seat.dice.length) dice.append(el("small", { class: "private-note" }, "only you see these"));
    } else {
      for (let i = 0; i < seat.dice_count; i += 1) dice.append(el("span", { class: "die covered", "data-testid": "covered-die", "aria-label": "hidden die" }, "?"));
    }
    seats.append(
      el("div", {
        class: ["seat", mine && "me", seat.folded && "folded", turn && "turn", !seat.connected && "away", !seat.ready && "out"].filter(Boolean).join(" "),
        "data-testid": `seat-${seat.player}`,
      },
        el("div", { class: "who" },
          el("strong", { class: "name" }, seat.name),
          mine ? " (you)" : "",
          seat.bot ? el("span", { class: "bot", "data-testid": `bot-${seat.player}`, title: "a computer player" }, " computer") : "",
          seat.seat === m.button ? el("span", { class: "button", title: "dealer button" }, "D") : "",
        ),
        el("div", {}, `stack ${seat.stack}`, seat.bet ? ` · bet ${seat.bet}` : ""),
        el("div", { class: "state" },
          !seat.connected ? "disconnected · " : "",
          seat.folded ? "folded · " : "",
          !seat.ready ? "sitting out · " : "",
          turn ? el("span", {}, "to act: ", el("span", { class: "countdown", "data-deadline": hand.deadline ?? "" }), " s") : "",
        ),
        dice,
        seat.dice && seat.dice.length === 4 ? el("div", { class: "hand-name" }, rollName(seat.dice)) : "",
      ),
    );
  }

  renderActions(prompt, m);
  $("result").replaceChildren(...state.result.map((line) => el("p", {}, line)));
  $("log").replaceChildren(...state.log.slice(-60).map((line) => el("li", {}, line)));
  tick();
}

function renderActions(prompt, m) {
  const box = $("actions");
  box.replaceChildren();
  if (!prompt) return;
  const legal = prompt.legal;
  const can = (kind) => legal.actions.includes(kind);
  const button = (kind, label, key, fields = {}) =>
    el("button", { "data-testid": `action-${kind}`, "aria-keyshortcuts": key, onclick: () => act(kind, fields) }, label);
  const amountControl = (kind, min, max, label) => {
    const input = el("input", { type: "number", min, max, value: min, "data-testid": `amount-${kind}`, "aria-label": `${label} amount` });
    const slider = el("input", { type: "range", min, max, value: min, "aria-label": `${label} slider` });
    slider.addEventListener("input", () => { input.value = slider.value; });
    input.addEventListener("input", () => { slider.value = input.value; });
    const go = el("button", { "data-testid": `action-${kind}`, onclick: () => act(kind, kind === "bet" ? { amount: Number(input.value) } : { to: Number(input.value) }) }, label);
    return el("span", { class: "amount" }, go, input, slider, el("small", {}, ` ${min}–${max}`));
  };
  box.append(el("p", { class: "your-turn" }, "Your turn · ", el("span", { class: "countdown", "data-deadline": prompt.deadline }), " s"));
  if (can("roll")) box.append(button("roll", "Roll the dice", "r"));
  if (can("check")) box.append(button("check", "Check", "k"));
  if (can("call")) box.append(button("call", `Call ${legal.call_amount}`, "c"));
  if (can("bet")) box.append(amountControl("bet", legal.bet_min, legal.bet_max, "Bet"));
  if (can("raise")) box.append(amountControl("raise", legal.raise_min, legal.raise_max, "Raise to"));
  if (can("all_in")) box.append(button("all_in", `All in (${legal.all_in_total})`, "i"));
  if (can("reroll")) box.append(el("p", {}, `Click one of your dice to reroll it for ${legal.reroll_cost}, or pass.`));
  if (can("pass")) box.append(button("pass", "Pass", "p"));
  if (can("ante")) box.append(button("ante", `Pay ${legal.ante_amount} and stay in`, "a"));
  if (can("fold")) box.append(button("fold", "Fold", "f"));
  box.querySelector("button")?.focus();
}

async function act(kind, fields = {}) {
  const prompt = state.prompt;
  state.prompt = null;
  render();
  const done = await attempt(client.request(kind, { room: state.room, ...fields }));
  if (!done && prompt && state.prompt === null) {
    state.prompt = prompt; // refused: the choice is still ours
    render();
  }
}

async function leave() {
  const room = state.room;
  await attempt(client.request("leave_room", { room }));
  state.room = null;
  state.model = null;
  openLobby();
}

function renderChat() {
  $("chat").replaceChildren(...state.chat.slice(-50).map((c) => el("li", {}, el("strong", {}, c.name), ": ", c.text)));
}

$("chat-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("chat-input");
  const text = input.value.trim();
  if (!text || !state.room) return;
  if (await attempt(client.request("chat", { room: state.room, text }))) input.value = "";
});

function tick() {
  for (const node of document.querySelectorAll("[data-deadline]")) {
    const deadline = Number(node.dataset.deadline);
    if (!deadline) { node.textContent = ""; continue; }
    node.textContent = String(Math.max(0, Math.ceil((deadline - state.clockOffset - Date.now()) / 1000)));
  }
}
setInterval(tick, 250);

document.addEventListener("keydown", (event) => {
  if (event.target.closest?.("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
  const keys = { r: "roll", k: "check", c: "call", f: "fold", p: "pass", a: "ante", i: "all_in" };
  const kind = keys[event.key.toLowerCase()];
  const target = kind && document.querySelector(`[data-testid="action-${kind}"]`);
  if (target) {
    event.preventDefault();
    target.click();
  }
});

// -- start -------------------------------------------------------------------------

$("name-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("name-input").value.trim();
  if (name) await attempt(client.connect(name));
});

syncCreateForm();
if (client.token) attempt(client.connect());
else show("welcome");
