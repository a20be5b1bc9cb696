// The panels under the table: this hand's log, the chat and the earlier hands.
// The log and the chat are live regions (role="log"): new lines are appended,
// never redrawn, so a screen reader reads each once, and each list follows its
// newest line unless the reader has scrolled up.

import { $, appendAndFollow, diceWithName, el, lineNode, nameNode, userText } from "../dom.js";
import { replay } from "../history.js";

const shown = { log: { epoch: -1, count: 0 }, chat: { epoch: -1, count: 0 }, history: null };

export function renderLog(state) {
  const list = $("log");
  if (shown.log.epoch !== state.logEpoch || state.log.length < shown.log.count) {
    list.replaceChildren();
    shown.log = { epoch: state.logEpoch, count: 0 };
  }
  const fresh = state.log.slice(shown.log.count).map((line) => lineNode("li", line));
  shown.log.count = state.log.length;
  if (fresh.length) appendAndFollow(list, fresh);
}

export function renderChat(state) {
  // Only players in a seat may talk (a crowd of spectators must not flood the table).
  const watching = state.model?.role !== "player";
  $("chat-form").hidden = watching;
  $("chat-spectator").hidden = !watching;
  const list = $("chat");
  if (shown.chat.epoch !== state.chatEpoch || state.chat.length < shown.chat.count) {
    list.replaceChildren();
    shown.chat = { epoch: state.chatEpoch, count: 0 };
  }
  const fresh = state.chat.slice(shown.chat.count).map((c) =>
    el("li", { class: c.player === state.model?.you ? "mine" : "" }, nameNode(c.name), ": ", userText(c.text)));
  shown.chat.count = state.chat.length;
  if (fresh.length) appendAndFollow(list, fresh);
}

/** Earlier hands, newest first, each folded into a <details> with its log, dice and results. */
export function renderHistory(state) {
  const hands = state.history.finished();
  const key = hands.map((r) => `${r.room}:${r.hand}:${r.events.length}:${state.verdicts.get(r.hand)?.status}`).join("|");
  if (key === shown.history) return;
  shown.history = key;
  const list = $("history");
  const open = new Set([...list.querySelectorAll("details[open]")].map((d) => d.dataset.hand));
  list.replaceChildren(...hands.map((record) => {
    const hand = replay(record);
    const status = state.verdicts.get(record.hand)?.status;
    const mark = { verified: ["✓ dice verified", "ok"], failed: ["⚠ dice check failed", "failed"] }[status];
    return el("li", { "data-testid": `history-hand-${record.hand}` },
      el("details", { "data-hand": record.hand, open: open.has(String(record.hand)) },
        el("summary", {}, lineNode("span", hand.summary),
          mark ? el("span", { class: `fair-mark ${mark[1]}`, "data-testid": `history-check-${record.hand}` }, ` · ${mark[0]}`) : ""),
        hand.dice.length ? el("ul", { class: "history-dice" }, hand.dice.map((d) =>
          el("li", {}, nameNode(d.name), d.folded ? " (folded) " : " ", diceWithName(d.dice)))) : "",
        el("ol", { class: "history-log" }, hand.lines.map((line) => lineNode("li", line))),
        hand.results.map((line) => lineNode("p", line, { class: "history-result" })),
      ));
  }));
  if (!hands.length) list.append(el("li", { class: "empty" }, "Finished hands appear here, as you saw them."));
}
