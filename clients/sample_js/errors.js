// Every error code of the protocol (protocol/messages.md, "Error codes") as a
// sentence a player understands. The server's `message` is for programmers and
// is never shown: at most, the setting it names is looked up by its name.

import { SETTING_BOUNDS } from "./facts.js";

export const SETTING_LABELS = {
  variant: "Variant",
  betting_structure: "Betting",
  max_players: "Seats",
  starting_chips: "Starting chips",
  ante: "Ante",
  bet_size: "Bet size",
  max_raises: "Raises per round",
  max_draw_rounds: "Draw rounds",
  turn_seconds: "Seconds per turn",
  reconnect_grace_seconds: "Seconds to reconnect",
  next_hand_delay_seconds: "Pause between hands",
  bot_fill_seconds: "Seconds before the computer fills empty seats",
  bot_fill_level: "Computer players' level",
  name: "Room name",
};

const SENTENCES = {
  bad_message: "The server could not read that request. Reload the page and try again.",
  unknown_type: "This page asked for something the server does not offer. Reload the page to get the current version.",
  unsupported_version: "This page is too old or too new for the server. Reload the page to get the matching version.",
  hello_required: "The connection was not ready yet. Wait a moment and try again.",
  session_not_found: "Your earlier visit has expired, so you start afresh.",
  invalid_name: "That name can't be used. A name needs visible letters, and no invisible or text-direction characters; it must not look like someone else's name either.",
  name_taken: "Someone in that room already uses this name (or one that looks the same). Change your name to sit there, or pick another room.",
  not_in_room: "You are no longer in that room.",
  already_in_room: "You are already in that room.",
  room_not_found: "That room has closed.",
  room_elsewhere: "That room is being played on another node of this server, and this page could not reach it. Try again in a moment.",
  room_full: "Every seat in that room is taken. You can watch instead.",
  too_many_rooms: "You already have as many open rooms as one player may. An empty room closes by itself after a minute; or join someone else's room.",
  invalid_setting: "One of the room settings is not allowed for this game.",
  not_seated: "Only players in a seat can do that; you are watching.",
  seat_taken: "That seat was just taken. Pick another one.",
  not_in_hand: "You are not playing this hand.",
  no_hand_in_progress: "That hand is already over.",
  not_your_turn: "It is not your turn any more.",
  illegal_action: "That move is not open to you right now.",
  illegal_amount: "That amount is outside what you can put in right now.",
  insufficient_chips: "You do not have enough chips for that.",
  not_room_creator: "Only the player who opened this room can add or remove its computer players.",
  not_a_bot: "That player is not one of the computer's, so it can't be removed.",
  no_player_seated: "Computer players need a person at the table: sit down first.",
  invite_required: "That room is private: you need its invite link, from someone at the table.",
  too_many_bots: "The server runs as many computer players as it can right now. Try again later, or play with people.",
  auth_required: "This server plays with signed-in players only: open the game from your site's page.",
  auth_invalid: "Your sign-in could not be checked. Open the game again from your site's page.",
  auth_expired: "Your sign-in has expired. Open the game again from your site's page.",
  auth_wrong_audience: "Your sign-in was made for another game. Open this game from your site's page.",
  auth_wrong_issuer: "Your sign-in comes from a site this server does not trust.",
  auth_unknown_key: "Your sign-in could not be checked. Open the game again from your site's page.",
  auth_replayed: "That sign-in was used already. Open the game again from your site's page.",
  auth_unavailable: "The server cannot check sign-ins right now. Try again in a moment.",
  banned: "You are banned from this server for now.",
  not_moderator: "Only the room's creator or a moderator may do that.",
  cannot_moderate: "You cannot do that to this player.",
  player_not_found: "That player is not here any more.",
  kicked: "You were removed from that room and may not come back yet.",
  muted: "Your chat in this room is muted for now.",
  chat_refused: "That message was not sent: a word in it is not allowed here.",
  message_not_found: "That message is too old to report.",
  moderation_limited: "That was too often: wait a minute, then try again.",
  no_account: "Sign in on your site to have a profile and a rating.",
  server_draining: "This server is not opening new rooms right now. Try again in a little while.",
  rate_limited: "That was too fast: wait a moment, then try again.",
  message_too_large: "That was too long to send.",
  internal_error: "Something went wrong on the server, and nothing changed. Try again.",
  disconnected: "Not connected at the moment; reconnecting…",
};

const FALLBACK = "That did not work. Try again.";

export const ROOM_NAME_REFUSED =
  "A room name can't hold invisible characters or characters that change the direction of text, and it needs something visible. Use visible letters only.";

/** The sentence for an error (a TaliError or an `error` message): never the server's raw text. */
export function describeError(error) {
  const code = error?.code;
  if (code === "invalid_setting") return describeSetting(error.message ?? "");
  // create_room's name is refused with the code of player names; its message says so.
  if (code === "invalid_name" && /^room name\b/.test(error.message ?? "")) return ROOM_NAME_REFUSED;
  return SENTENCES[code] ?? FALLBACK;
}

/** `invalid_setting` messages start with the setting's name ("max_players: ..."). */
function describeSetting(message) {
  const name = /^([a-z_]+)\s*:/.exec(message)?.[1];
  const label = SETTING_LABELS[name];
  if (!label) return SENTENCES.invalid_setting;
  const bounds = SETTING_BOUNDS[name];
  if (name === "ante") return `${label}: it must be a whole number from 1 up to the starting chips.`;
  if (name === "bet_size") return `${label}: it must be at least the ante and at most the starting chips.`;
  if (bounds) return `${label}: it must be a whole number from ${bounds[0]} to ${bounds[1]}, and it must apply to this game.`;
  return `${label}: that value is not allowed for this game.`;
}
