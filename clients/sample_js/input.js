// What the player does: the forms (name, new room, lobby filters, chat), the
// buttons' handlers (act, join, leave, sit in or out, buy in again, play here)
// and the one-key shortcuts. Each sends requests through the client library (tali/) and
// puts any refusal into words (errors.js); the state changes come back as
// server messages, through app.js.

import { $, typing } from "./dom.js";
import { ROOM_NAME_REFUSED, describeError } from "./errors.js";
import { SHORTCUTS } from "./views/actions.js";
import { syncCreateForm } from "./views/lobby.js";
import { SETTING_BOUNDS, SETTING_DEFAULTS } from "./facts.js";
import { enterRoom, entropyFor, leaveRoom, roomList } from "./state.js";
import { newEntropy } from "./tali/fairness.js";
import { live } from "./describe.js";

// Characters a name must not hold: controls, and invisible formatting (bidi
// controls, zero-width characters and the like: Unicode category Cf).
const UNSHOWABLE = /[\p{Cc}\p{Cf}]/u;

/** Bots seated by "Play against the computer". */
const COMPUTER_OPPONENTS = 3;

/** Rooms the lobby asks for at a time ("Show more rooms" asks for the next page). */
const LOBBY_PAGE = 50;

// Lengths are counted in characters (code points), as the server counts them: the
// fields have no `maxlength`, which counts UTF-16 units and would cut 24 emoji to 12.
const NAME_LENGTH = 24;
const ROOM_NAME_LENGTH = 40;
const CHAT_LENGTH = 280;

/** A text's length in characters, as the server counts them. */
export function characters(text) {
  return [...text].length;
}

/** Why a name would be refused, in words; "" if it looks fine (the server has the last word). */
export function nameProblem(name) {
  if (!name) return "Type a name first.";
  if (characters(name) > NAME_LENGTH) return `A name has at most ${NAME_LENGTH} characters (this one has ${characters(name)}).`;
  if (UNSHOWABLE.test(name)) {
    return "A name can't hold invisible characters or characters that change the direction of text. Use visible letters only.";
  }
  return "";
}

/** Why a room's name would be refused, in words; "" if it looks fine. */
export function roomNameProblem(name) {
  if (characters(name) > ROOM_NAME_LENGTH) {
    return `A room name has at most ${ROOM_NAME_LENGTH} characters (this one has ${characters(name)}).`;
  }
  if (UNSHOWABLE.test(name)) return ROOM_NAME_REFUSED;
  return "";
}

export function createHandlers({ client, state, render, storage = globalThis.localStorage }) {
  /** Show `text` above the page ("" hides it); `refusal`: it says why a request was refused. */
  function notice(text, { refusal = false } = {}) {
    state.notice = text;
    state.noticeRefusal = Boolean(text) && refusal;
    render();
  }

  /**
   * Await a request; on refusal show why in words (`words` may say it better
   * for a given code) and resolve to null. A success clears a refusal's notice
   * (the player has moved on), and any other notice unless `keep` (requests the
   * page makes by itself, which must not wipe what the server told the player).
   */
  async function attempt(promise, { words = {}, keep = false } = {}) {
    try {
      const reply = await promise;
      if (state.notice && (!keep || state.noticeRefusal)) notice("");
      return reply;
    } catch (error) {
      state.lastError = error.code ?? "";
      notice(words[error.code] ?? describeError(error), { refusal: true });
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

  /** Sit down (or watch) in `room`; a private room's `invite` comes from an invite link. */
  async function join(room, role, { invite = null } = {}) {
    const before = state.room;
    enterRoom(state, room); // its player_joined and snapshot are on their way
    state.joining = room;
    const fields = { room, role };
    if (invite) fields.invite = invite;
    const joined = await attempt(client.request("join_room", fields), {
      words: {
        name_taken: `Someone in that room already uses the name “${state.me?.name}” (or one that looks the same). To sit there, change your name in the lobby, or pick another room.`,
      },
    });
    state.joining = null;
    if (!joined && invite && role === "player" && state.lastError === "room_full") {
      // Invited to a full table: watch it (a seat can be taken from there when one frees).
      await join(room, "spectator", { invite });
      return;
    }
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

  /** An invite link opened this page (`#room=…&invite=…`): go straight into that room. */
  async function followInvite() {
    const wanted = state.invited;
    state.invited = null;
    if (!wanted || state.room === wanted.room) return false;
    if (state.room) {
      notice("You followed an invite link, but you are still at another table: leave it, then open the link again.");
      return false;
    }
    await join(wanted.room, "player", { invite: wanted.invite });
    history.replaceState(null, "", location.pathname); // the secret leaves the address bar
    if (!state.room) {
      // Refused: the lobby, with the reason above it (the lobby's own requests keep it).
      const said = state.notice;
      await openLobby();
      if (said) notice(said);
    }
    return true;
  }

  /** The room's creator seats a bot of the level and speed chosen at the table. */
  async function addBot() {
    const { level, speed } = state.botChoice;
    await attempt(client.request("add_bot", { room: state.room, level, speed }));
  }

  async function removeBot(player) {
    await attempt(client.request("remove_bot", { room: state.room, player }));
  }

  /** Put the table's invite link on the clipboard (the field beside it can be copied by hand too). */
  async function copyInvite(link) {
    try {
      await navigator.clipboard.writeText(link);
      state.inviteCopied = "Link copied: send it to whoever you want at the table.";
    } catch {
      $("invite-link")?.select();
      state.inviteCopied = "Copying is not allowed here: the link is selected, copy it with Ctrl+C (or ⌘C).";
    }
    render();
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
    const left = await attempt(client.request("leave_room", { room }));
    // A player's player_left (before the result) has taken us to the lobby; a spectator
    // gets no such event: the result is the word that we are out.
    if (left && state.room === room) {
      leaveRoom(state);
      await openLobby();
    }
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
    if (characters(text) > CHAT_LENGTH) {
      notice(`A message has at most ${CHAT_LENGTH} characters (this one has ${characters(text)}): shorten it a little.`, { refusal: true });
      return;
    }
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
      if (form.elements.private?.checked) fields.private = true;
      const roomName = form.elements.name?.value.trim();
      if (roomName) {
        const problem = roomNameProblem(roomName);
        if (problem) {
          notice(problem, { refusal: true });
          form.elements.name.focus();
          return;
        }
        fields.name = roomName;
      }
      const created = await attempt(client.request("create_room", fields));
      if (created) await join(created.room, "player");
    });
    syncCreateForm();

    // "Play against the computer": one click to a private table of three of the server's
    // bots, in the variant, level and speed chosen beside the button (its own choice: not
    // the form to open a room below it). The room and its bots are the creator's.
    $("play-bots").addEventListener("click", async () => {
      const variant = $("bots-variant").value;
      const level = $("bots-level").value;
      const speed = $("bots-speed").value;
      state.botChoice = { level, speed };
      const settings = { variant, max_players: COMPUTER_OPPONENTS + 1 };
      const created = await attempt(client.request("create_room", { settings, private: true }));
      if (!created) return;
      await join(created.room, "player");
      for (let i = 0; i < COMPUTER_OPPONENTS; i += 1) {
        if (!(await attempt(client.request("add_bot", { room: created.room, level, speed })))) break;
      }
    });

    $("lobby-filters").addEventListener("change", () => {
      state.lobby.variant = $("filter-variant").value;
      state.lobby.hasSeat = $("filter-seat").checked;
      listRooms();
    });
    $("more-rooms").addEventListener("click", () => listRooms({ more: true }));
    $("change-name").addEventListener("click", changeName);
    $("notice-dismiss").addEventListener("click", () => notice(""));
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

  return { act, join, followInvite, addBot, removeBot, copyInvite, leave, setReady, buyIn, playHere, changeName, openLobby, attempt, notice, bindForms, bindKeys, moderate };
}
