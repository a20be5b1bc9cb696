// DOM helpers shared by the views: building elements, showing what players
// wrote safely, drawing dice, and keeping focus across redraws.
// Everything a player or the server wrote goes in as text nodes, never as HTML.

import { rollLabel } from "./scoring.js";

export const $ = (id) => document.getElementById(id);

/** Build an element; string children become text nodes, never HTML. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === "") continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// Bidi embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069): in
// someone else's name or chat line they could reorder what is shown around
// them. They are never put in the page as they are, but shown as a visible mark.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
const BIDI_NAMES = {
  "\u202A": "LRE", "\u202B": "RLE", "\u202C": "PDF", "\u202D": "LRO", "\u202E": "RLO",
  "\u2066": "LRI", "\u2067": "RLI", "\u2068": "FSI", "\u2069": "PDI",
};

/** Text a player wrote, as plain text with every bidi control replaced by a visible mark. */
export function visibleText(text) {
  return String(text).replace(BIDI_CONTROLS, (c) => `[${BIDI_NAMES[c]}]`);
}

/** Someone's name, isolated from the text around it. */
export function nameNode(name, attrs = {}) {
  return el("bdi", { class: "name", ...attrs }, visibleText(name));
}

/** A chat line or other free text, isolated and laid out by its own first strong character. */
export function userText(text) {
  return el("span", { class: "user-text", dir: "auto" }, visibleText(text));
}

/**
 * A line of the hand log or a result: an array of parts, each a string,
 * `{name}` (a player's name) or `{dice}` (faces).
 */
export function lineNode(tag, parts, attrs = {}) {
  return el(tag, attrs, parts.map((part) => {
    if (typeof part === "string") return part;
    if (part.name !== undefined) return nameNode(part.name);
    if (part.dice) return el("span", { class: "faces" }, part.dice.join(" "));
    return "";
  }));
}

const PIPS = { 1: [5], 2: [1, 9], 3: [1, 5, 9], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] };

/** A die drawn with CSS: a 3×3 grid of pips. */
export function die(face, attrs = {}) {
  const extra = attrs.class ? ` ${attrs.class}` : "";
  const node = el("span", { role: "img", "aria-label": `die showing ${face}`, ...attrs, class: `die${extra}`, "data-face": face });
  for (let cell = 1; cell <= 9; cell += 1) node.append(el("i", { class: PIPS[face].includes(cell) ? "pip" : "" }));
  return node;
}

/** A die whose face this page may not see. */
export function coveredDie() {
  return el("span", { class: "die covered", role: "img", "aria-label": "hidden die", "data-testid": "covered-die" }, "?");
}

/** Four dice with the name of the roll they make ("Venus", "Senio 10", "no score (a losing roll)"). */
export function diceWithName(dice, attrs = {}) {
  const name = rollLabel(dice);
  return el("span", { class: "dice-set", ...attrs },
    el("span", { class: "dice" }, dice.map((face) => die(face))),
    name ? el("span", { class: "hand-name" }, name) : "",
  );
}

/** The element's key for getting focus back after a redraw. */
function focusKey(node) {
  if (!node || node === document.body) return null;
  if (node.dataset?.testid) return `[data-testid="${node.dataset.testid}"]`;
  if (node.id) return `#${node.id}`;
  return null;
}

/**
 * Run a redraw without losing the player's place: if the focused element was
 * replaced, focus its replacement (found by test id or id) and put the caret back.
 */
export function keepFocus(redraw) {
  const before = document.activeElement;
  const key = focusKey(before);
  let selection = null;
  try {
    if (before?.tagName === "INPUT") selection = [before.selectionStart, before.selectionEnd];
  } catch {
    selection = null; // number inputs have no selection
  }
  redraw();
  if (!key || before.isConnected) return;
  const again = document.querySelector(key);
  if (!again || again.disabled) return;
  again.focus({ preventScroll: true });
  if (selection && selection[0] !== null) {
    try {
      again.setSelectionRange(...selection);
    } catch {
      // not a text field
    }
  }
}

/** Is a text field (or a select) being typed in? One-key shortcuts must then keep quiet. */
export function typing(target = document.activeElement) {
  return Boolean(target?.closest?.("input, select, textarea, [contenteditable]"));
}

/**
 * Append new items to a list and keep its scrolling box (the list's parent)
 * at the newest, unless the reader has scrolled up to read.
 */
export function appendAndFollow(list, nodes) {
  const box = list.parentElement;
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
  list.append(...nodes);
  if (atEnd) box.scrollTop = box.scrollHeight;
}
