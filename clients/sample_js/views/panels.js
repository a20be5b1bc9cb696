// The panels under the table: this hand's log, the chat and the earlier hands.
// The log and the chat are live regions (role="log"): new lines are appended,
// never redrawn, so a screen reader reads each once, and each list follows its
// newest line unless the reader has scrolled up.

import { $, appendAndFollow, diceWithName, el, lineNode, nameNode, userText } from "../dom.js";
import { replay } from "../history.js";
import { toggleMute } from "../state.js";

const openRecords = new Set(); // dice records shown, kept across redraws
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

/** "21:04", the local time a chat line was said (the server's clock), or "" if unknown. */
export function chatTime(at) {
  if (!at) return "";
  const when = new Date(at);
  return `${String(when.getHours()).padStart(2, "0")}:${String(when.getMinutes()).padStart(2, "0")}`;
}

export function renderChat(state, render = () => {}) {
  // Only players in a seat may talk (a crowd of spectators must not flood the table).
  const watching = state.model?.role !== "player";
  $("chat-form").hidden = watching;
  $("chat-spectator").hidden = !watching;
  const list = $("chat");
  if (shown.chat.epoch !== state.chatEpoch || state.chat.length < shown.chat.count) {
    list.replaceChildren();
    shown.chat = { epoch: state.chatEpoch, count: 0 };
    renderMuted(state, render);
  }
  const mute = (c) => () => {
    toggleMute(state, c.player);
    render();
  };
  const fresh = state.chat.slice(shown.chat.count).filter((c) => !state.muted.has(c.player)).map((c) => {
    const mine = c.player === state.model?.you;
    const time = chatTime(c.at);
    return el("li", { class: mine ? "mine" : "" },
      time ? el("time", { datetime: new Date(c.at).toISOString(), class: "chat-time" }, time, " ") : "",
      nameNode(c.name), ": ", userText(c.text),
      mine ? "" : el("button", {
        type: "button", class: "mute", "data-testid": `chat-mute-${c.player}`, "aria-label": `Mute ${c.name} in the chat`, onclick: mute(c),
      }, "mute"));
  });
  shown.chat.count = state.chat.length;
  if (fresh.length) appendAndFollow(list, fresh);
}

/** Who this browser mutes, each with a button to hear them again. */
function renderMuted(state, render) {
  const box = $("chat-muted");
  const names = new Map(state.chat.map((c) => [c.player, c.name]));
  const muted = [...state.muted].filter((p) => names.has(p));
  box.hidden = !muted.length;
  box.replaceChildren(...(muted.length ? ["Muted: ", ...muted.flatMap((p, i) => [i ? ", " : "", nameNode(names.get(p)), " ",
    el("button", {
      type: "button", "data-testid": `chat-unmute-${p}`, "aria-label": `Unmute ${names.get(p)}`,
      onclick: () => { toggleMute(state, p); render(); },
    }, "unmute")])] : []));
}

/** This evening at the table: hands, wins, chips up or down, and a graph of the stack. */
export function renderSession(state) {
  const stacks = state.history.stacks;
  const start = state.model?.settings.starting_chips ?? 0;
  if (!stacks.length) {
    $("session-stats").textContent = "No hand played yet.";
    $("chip-graph").replaceChildren();
    return;
  }
  const won = stacks.filter(([, , w]) => w > 0).length;
  const last = stacks.at(-1)[1];
  const biggest = Math.max(...stacks.map(([, , w]) => w));
  const change = last - start;
  $("session-stats").textContent =
    `${stacks.length} hand${stacks.length === 1 ? "" : "s"} played, ${won} won · stack ${last} (${change >= 0 ? "+" : ""}${change} since you sat down with ${start})${biggest ? ` · biggest pot won ${biggest}` : ""}`;
  $("chip-graph").replaceChildren(chipGraph([start, ...stacks.map(([, s]) => s)], stacks.map(([hand]) => hand)));
}

/** A tick's label: whole numbers, thousands as "k" from ten thousand. */
function tickLabel(n) {
  return n >= 10000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

/** A round step for about `count` ticks from 0 to `top`: 1, 2 or 5 times a power of ten. */
function tickStep(top, count) {
  const raw = top / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw);
}

/**
 * A line of the stack after each hand, drawn as SVG with its axes: the hand numbers
 * along the bottom, the chips up the side (no style attributes: the page's CSP). The
 * labels are text of the drawing, sized by the stylesheet in its units, so they scale
 * with it and stay readable on a phone. `hands[i]` is the hand after which
 * `values[i + 1]` was the stack (`values[0]`: the stack sat down with).
 */
export function chipGraph(values, hands) {
  const ns = "http://www.w3.org/2000/svg";
  const node = (tag, attrs, text) => {
    const made = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) made.setAttribute(k, String(v));
    if (text !== undefined) made.textContent = text;
    return made;
  };
  const width = 320;
  const height = 158;
  const step = tickStep(Math.max(1, ...values), 3);
  const top = Math.ceil(Math.max(1, ...values) / step) * step;
  const yTicks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const left = 12 + 6.6 * Math.max(...yTicks.map((t) => tickLabel(t).length));
  const [right, upper, bottom] = [10, 26, height - 42];
  const x = (i) => left + (values.length > 1 ? (i * (width - left - right)) / (values.length - 1) : 0);
  const y = (v) => bottom - (v / top) * (bottom - upper);
  const svg = node("svg", {
    viewBox: `0 0 ${width} ${height}`, role: "img", class: "chips-svg", "data-testid": "chip-line",
    "data-points": values.join(" "),
    "aria-label": `Your stack after each hand: ${values.join(", ")}`,
  });
  for (const t of yTicks) {
    svg.append(node("line", { x1: left, x2: width - right, y1: y(t), y2: y(t), class: t ? "grid" : "axis" }));
    svg.append(node("text", { x: left - 5, y: y(t) + 4, "text-anchor": "end", class: "tick", "data-testid": "graph-chips" }, tickLabel(t)));
  }
  svg.append(node("line", { x1: left, x2: left, y1: upper, y2: bottom, class: "axis" }));
  // Every hand's number while they fit (about six), else every few, always the last.
  const every = Math.ceil(hands.length / 6);
  hands.forEach((hand, i) => {
    if ((hands.length - 1 - i) % every) return;
    svg.append(node("line", { x1: x(i + 1), x2: x(i + 1), y1: bottom, y2: bottom + 4, class: "axis" }));
    svg.append(node("text", { x: x(i + 1), y: bottom + 16, "text-anchor": "middle", class: "tick", "data-testid": "graph-hand" }, String(hand)));
  });
  svg.append(node("text", { x: left, y: 12, "text-anchor": "end", class: "axis-title" }, "chips"));
  svg.append(node("text", { x: (left + width - right) / 2, y: height - 5, "text-anchor": "middle", class: "axis-title" }, "hand"));
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  svg.append(node("polyline", { points, class: "chips-line" }));
  return svg;
}

/**
 * What it takes to check a hand's dice by hand (protocol/FAIRNESS.md): the commitments
 * published as it began, each roll as seen, the entropy this page sent, the openings.
 */
export function diceRecord(state, record) {
  const started = record.events.find((e) => e.type === "hand_started");
  const ended = record.events.find((e) => e.type === "hand_ended");
  const openings = [...(ended?.openings ?? [])];
  if (record.opening && !openings.some((o) => o.player === record.opening.player)) openings.push(record.opening);
  const rolls = record.events
    .filter((e) => e.type === "dice_rolled" || e.type === "rerolled" || e.type === "roll_off")
    .map((e) => ({ ...e }));
  return {
    fairness: "tali-fair-v1", room: record.room, hand: record.hand, you: record.you,
    commitments: started?.commitments ?? [], entropy_sent: state.history.sentFor(record.hand), rolls, openings,
  };
}

function diceRecordBox(state, record) {
  const text = JSON.stringify(diceRecord(state, record), null, 1);
  const save = () => {
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const link = el("a", { href: url, download: `tali-${record.room}-hand-${record.hand}.json`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  };
  // A button that shows it, not a nested <details>: one summary per hand in the list.
  const id = `dice-record-${record.room}-${record.hand}`;
  const pre = el("pre", { id, "data-testid": `dice-record-${record.hand}`, tabindex: "0", hidden: !openRecords.has(id) }, text);
  const toggle = el("button", {
    type: "button", "data-testid": `show-record-${record.hand}`, "aria-controls": id, "aria-expanded": String(openRecords.has(id)),
    onclick: () => {
      const open = pre.hidden;
      pre.hidden = !open;
      toggle.setAttribute("aria-expanded", String(open));
      if (open) openRecords.add(id);
      else openRecords.delete(id);
    },
  }, "Dice record: commitments, entropy, openings");
  return el("div", { class: "dice-record" }, toggle, " ",
    el("button", { type: "button", "data-testid": `save-record-${record.hand}`, onclick: save }, "Save it as a file"), pre);
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
        diceRecordBox(state, record),
      ));
  }));
  if (!hands.length) list.append(el("li", { class: "empty" }, "Finished hands appear here, as you saw them."));
}
