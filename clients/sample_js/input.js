// What the player does: the forms (name, new room, lobby filters, chat), the
// buttons' handlers (act, join, leave, sit in or out, buy in again, play here)
// and the one-key shortcuts. Each sends requests through the client library (tali/) and
// puts any refusal into words (errors.js); the state changes come back as
// server messages, through app.js.

import { $, typing } from "./dom.js";
import { describeError } from "./errors.js";
import { SHORTCUTS } from "./views/actions.js";
import { syncCreateForm } from "./views/lobby.js";
import { SETTING_BOUNDS, SETTING_DEFAULTS } from "./facts.js";
import { enterRoom, entropyFor, roomList } from "./state.js";
import { newEntropy } from "./tali/fairness.js";
import { live } from "./describe.js";

// Characters a name must not hold: controls, and invisible formatting (bidi
// controls, zero-width characters and the like: Unicode category Cf).
const UNSHOWABLE = /[\p{Cc}\p{Cf}]/u;

/** Bots seated by "Play against the computer". */
const COMPUTER_OPPONENTS = 3;

/** Rooms the lobby asks for at a time ("Show more rooms" asks for the next page). */
const LOBBY_PAGE = 50;

/** Why a name would be refused, in words; "" if it looks fine (the server has the last word). */
export function nameProblem(name) {
  if (!name) return "Type a name first.";
  if ([...name].length > 24) return "A name has at most 24 characters.";
  if (UNSHOWABLE.test(name)) {
    return "A name can't hold invisible characters or characters that change the direction of text. Use visible letters only.";
  }
  return "";
}

export function createHandlers({ client, state, render, storage = globalThis.localStorage }) {
  function notice(text) {
    state.notice = text;
    render();
  }

  /**
   * Await a request; on refusal show why in words (`words` may say it better
   * for a given code) and resolve to null. A success clears the last notice,
   * unless `keep` (requests the page makes by itself).
   */
  async function attempt(promise, { words = {}, keep = false } = {}) {
    try {
      const reply = await promise;
      if (state.notice && !keep) notice("");
      return reply;
    } catch (error) {
      notice(words[error.code] ?? describeError(error));
      return null;
    }
  }

  async function openLobby() {
    state.screen = "lobby";
    render();
    history.replaceState(null, "", location.pathname);
    await attempt(client.request("subscribe_lobby"), { keep: true });
    await listRooms();
  }

  async function listRooms({ more = false } = {}) {
    // The server filters and pages the list: PAGE rooms at a time, oldest first.
    const fields = { limit: LOBBY_PAGE };
    if (state.lobby.variant) fields.variant = state.lobby.variant;
    if (state.lobby.hasSeat) fields.has_seat = true;
    if (more && state.lobby.nextCursor) fields.cursor = state.lobby.nextCursor;
    const list = await attempt(client.request("list_rooms", fields), { keep: true });
    if (list) roomList(state, list, { append: more });
    render();
  }

  async function join(room, role) {
    const before = state.room;
    enterRoom(state, room); // its player_joined and snapshot are on their way
    state.joining = room;
    const joined = await attempt(client.request("join_room", { room, role }), {
      words: {
        name_taken: `Someone in that room already uses the name “${state.me?.name}” (or one that looks the same). To sit there, change your name in the lobby, or pick another room.`,
      },
    });
    state.joining = null;
    if (!joined) {
      if (before === null) {
        state.room = null;
        state.screen = "lobby";
        render();
      }
      return;
    }
    await attempt(client.request("unsubscribe_lobby"), { keep: true });
  }

  async function act(kind, fields = {}) {
    const prompt = state.prompt;
    // Our own share of the dice: fresh entropy for each roll or reroll (the same if sent again).
    const entropy = prompt && (kind === "roll" || kind === "reroll") ? { entropy: entropyFor(state, prompt, newEntropy) } : {};
    state.prompt = null; // the bar goes at once: the action feels instant
    render();
    const done = await attempt(client.request(kind, { room: state.room, ...fields, ...entropy }));
    if (!done && prompt && state.prompt === null && state.model) {
      state.prompt = prompt; // refused: the choice is still ours
      render();
    }
  }

  /** Leave the room; in a hand you are still in, only after saying yes to folding. */
  function leave() {
    const m = state.model;
    const me = m?.seats.find((s) => s.player === m.you);
    if (me && live(m) && me.in_hand && !me.folded) {
      $("confirm-leave-text").textContent =
        `You are in hand ${m.hand.number}. Leaving now folds your dice: the ${me.contributed} chips you put in stay in the pot, and you take your stack of ${me.stack} with you.`;
      $("confirm-leave").returnValue = ""; // Escape must not repeat an earlier "leave"
      $("confirm-leave").showModal();
      return;
    }
    reallyLeave();
  }

  async function reallyLeave() {
    const room = state.room;
    if (!room) return;
    await attempt(client.request("leave_room", { room }));
    // player_left (before the result) has taken us to the lobby
  }

  async function setReady(ready) {
    await attempt(client.request("set_ready", { room: state.room, ready }));
  }

  /** Kick or mute a player (``kind``), or close the room (no player): the room's creator and
   *  moderators may; the server refuses anyone else, in words. */
  async function moderate(kind, player) {
    const fields = player ? { room: state.room, player } : { room: state.room };
    const done = await attempt(client.request(kind, fields));
    if (done && kind === "mute") notice("Muted in this room for ten minutes.");
  }

  /** A busted player leaves and sits down again with a fresh stack. */
  async function buyIn() {
    const room = state.room;
    const left = await attempt(client.request("leave_room", { room }));
    if (!left) return;
    await join(room, "player");
  }

  /** This tab was taken over by another: take the session back. */
  async function playHere() {
    await attempt(client.connect());
  }

  /** Start afresh under another name: forget this session. */
  function changeName() {
    client.forget();
    state.screen = "welcome";
    render();
    $("name-input").focus();
  }

  async function sendChat(input) {
    const text = input.value.trim();
    if (!text || !state.room) return;
    const sent = await attempt(client.request("chat", { room: state.room, text }), {
      words: { rate_limited: "You are chatting faster than the room allows: wait a little before the next message." },
    });
    if (sent) input.value = "";
  }

  function bindForms() {
    $("name-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const name = $("name-input").value.trim();
      const problem = nameProblem(name);
      $("name-error").textContent = problem;
      if (problem) {
        $("name-input").focus();
        return;
      }
      storage?.setItem("tali.name", name);
      const welcome = await attempt(client.connect(name));
      if (!welcome && state.notice) {
        $("name-error").textContent = state.notice;
        state.notice = "";
        render();
      }
    });
    $("name-input").value = storage?.getItem("tali.name") ?? "";

    // The settings' bounds and defaults come from the server's own (facts.js), not from the page.
    const form = $("create-form");
    for (const [name, [min, max]] of Object.entries(SETTING_BOUNDS)) {
      const input = form.elements[name];
      if (!input) continue;
      input.min = String(min);
      input.max = String(max);
      if (name in SETTING_DEFAULTS) input.value = String(SETTING_DEFAULTS[name]);
    }
    form.addEventListener("change", syncCreateForm);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const settings = { variant: form.variant.value };
      for (const input of form.querySelectorAll("[data-setting]")) {
        if (input.closest("label")?.hidden || input.value === "") continue;
        settings[input.name] = input.type === "number" ? Number(input.value) : input.value;
      }
      const fields = { settings };
      const roomName = form.elements.name?.value.trim();
      if (roomName) fields.name = roomName;
      const created = await attempt(client.request("create_room", fields));
      if (created) state.created.add(created.room);
      if (created) await join(created.room, "player");
    });
    syncCreateForm();

    // "Play against the computer": one click to a table of three of the server's bots, in
    // the variant chosen in the form (the room and its bots are the creator's, as for anyone).
    $("play-bots").addEventListener("click", async () => {
      const variant = form.variant.value;
      const settings = { variant, max_players: COMPUTER_OPPONENTS + 1 };
      const created = await attempt(client.request("create_room", { settings }));
      if (!created) return;
      state.created.add(created.room);
      await join(created.room, "player");
      for (let i = 0; i < COMPUTER_OPPONENTS; i += 1) {
        if (!(await attempt(client.request("add_bot", { room: created.room, level: "expert" })))) break;
      }
    });

    $("lobby-filters").addEventListener("change", () => {
      state.lobby.variant = $("filter-variant").value;
      state.lobby.hasSeat = $("filter-seat").checked;
      listRooms();
    });
    $("more-rooms").addEventListener("click", () => listRooms({ more: true }));
    $("change-name").addEventListener("click", changeName);
    $("play-here").addEventListener("click", playHere);

    $("chat-form").addEventListener("submit", (event) => {
      event.preventDefault();
      sendChat($("chat-input"));
    });

    $("confirm-leave").addEventListener("close", () => {
      if ($("confirm-leave").returnValue === "leave") reallyLeave();
    });
  }

  function bindKeys() {
    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      if (typing(event.target) || typing() || document.querySelector("dialog[open]")) return;
      const kind = SHORTCUTS[event.key.toLowerCase()];
      const target = kind && document.querySelector(`#actions [data-testid="action-${kind}"]`);
      if (target) {
        event.preventDefault();
        target.click();
      }
    });
  }

  return { act, join, leave, setReady, buyIn, playHere, changeName, openLobby, attempt, notice, bindForms, bindKeys, moderate };
}
