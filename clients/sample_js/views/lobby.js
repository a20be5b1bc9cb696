// The lobby: the open rooms (name, variant, seats, players), the filters, and
// the form to open a room.

import { $, el, nameNode, visibleText } from "../dom.js";
import { VARIANT_NAMES, variantLabel } from "../describe.js";
import { shownRooms } from "../state.js";

/** One room of the list: its name (or its variant, if it has none), settings, seats and players. */
export function roomItem(room, handlers = {}) {
  const s = room.settings;
  const full = room.seats_taken >= s.max_players;
  const plain = room.name ? visibleText(room.name) : `${VARIANT_NAMES[s.variant] ?? s.variant} room`;
  const title = room.name ? el("bdi", { class: "room-name" }, plain) : plain;
  const bots = (room.bots ?? []).filter(Boolean).length;
  const playing = room.state === "in_hand" ? `playing hand ${room.hands_played + 1}` : "waiting";
  return el("li", { class: "room", "data-testid": `room-${room.room}`, "data-variant": s.variant },
    el("div", { class: "room-title" }, el("strong", {}, title), " ", el("span", { class: "room-variant" }, `${variantLabel(s)} · ante ${s.ante}`)),
    el("div", { class: "room-facts" },
      el("span", { "data-testid": "room-seats" }, `${room.seats_taken}/${s.max_players} seats taken`),
      bots ? ` (${bots} by the computer)` : "",
      ` · ${room.spectators} watching · ${playing}`),
    room.players.length
      ? el("div", { class: "room-players", "data-testid": "room-players" }, "At the table: ",
        room.players.flatMap((name, i) => [i ? ", " : "", nameNode(name)]))
      : "",
    el("div", { class: "room-buttons" },
      el("button", {
        type: "button", "data-testid": `join-${room.room}`, onclick: () => handlers.join?.(room.room, "player"),
        disabled: full, "aria-label": `${full ? "Full" : "Sit down"}: ${plain}`,
      }, full ? "Full" : "Sit down"),
      el("button", {
        type: "button", "data-testid": `watch-${room.room}`, onclick: () => handlers.join?.(room.room, "spectator"),
        "aria-label": `Watch: ${plain}`,
      }, "Watch"),
    ),
  );
}

export function renderLobby(state, handlers) {
  const list = $("room-list");
  const rooms = shownRooms(state);
  const filtered = Boolean(state.lobby.variant || state.lobby.hasSeat);
  const more = Boolean(state.lobby.nextCursor);
  list.replaceChildren(...rooms.map((room) => roomItem(room, handlers)));
  if (!rooms.length && !more) {
    list.append(el("li", { class: "empty" }, filtered ? "No room matches these filters." : "No rooms yet: open one below."));
  }
  const count = `${rooms.length} room${rooms.length === 1 ? "" : "s"}`;
  $("room-count").textContent = more ? `${count} shown, more to come` : `${count}${filtered ? (rooms.length === 1 ? " matches" : " match") : ""}`;
  $("more-rooms").hidden = !more;
  $("lobby-me").replaceChildren(state.me ? el("span", {}, "You play as ", nameNode(state.me.name)) : "");
}

/** Show only the settings that apply to the chosen variant and betting structure. */
export function syncCreateForm() {
  const form = $("create-form");
  const variant = form.variant.value;
  const fixed = variant === "liars" && form.betting_structure.value === "fixed_limit";
  for (const label of form.querySelectorAll("[data-for]")) {
    const wanted = label.dataset.for;
    label.hidden = !(wanted === variant || (wanted === "fixed_limit" && fixed));
  }
}
