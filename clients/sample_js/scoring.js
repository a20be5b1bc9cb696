// Names of tali rolls (protocol/RULES.md §1.2), looked up in the table the server
// generates from its own scoring: the client never re-implements the rules.

import { PARTIAL_ODDS, ROLL_NAMES, ROLL_ODDS } from "./facts.js";

/** "Venus", "Senio 10", "Vultures (4s)", "The Dog" or "no score"; "" unless four dice. */
export function rollName(dice) {
  if (!dice || dice.length !== 4) return "";
  return ROLL_NAMES[[...dice].sort((a, b) => a - b).join("")] ?? "";
}

/** The class of a roll's name (rules §1.1): "Venus", "Senio", "Vultures" or "losing". */
export function rollClass(name) {
  if (!name) return "";
  if (name === "Venus") return "Venus";
  if (name.startsWith("Senio")) return "Senio";
  if (name.startsWith("Vultures") || name === "The Dog") return "Vultures";
  return "losing";
}

/** A roll's name with its class when the name does not say it: "The Dog (Vultures)", "no score (a losing roll)". */
export function rollLabel(dice) {
  const name = rollName(dice);
  const kind = rollClass(name);
  if (!name || name.startsWith(kind)) return name;
  return `${name} (${kind === "losing" ? "a losing roll" : kind})`;
}

/** A percentage in tenths (as facts.js has them) in words: "62 %", "0.4 %", "under 0.1 %". */
function percent(tenths) {
  if (tenths >= 100) return `${Math.round(tenths / 10)} %`;
  if (tenths > 0) return `${(tenths / 10).toFixed(1)} %`;
  return "under 0.1 %";
}

/**
 * How good four dice are, from exact odds (the server's, generated into facts.js from
 * the bots' odds module): "Senio 7: beats 62 % of rolls, ties 3 %". "" unless four dice.
 */
export function rollStrength(dice) {
  const name = rollName(dice);
  const odds = name && ROLL_ODDS[[...dice].sort((a, b) => a - b).join("")];
  if (!odds) return "";
  const [beats, ties] = odds;
  if (!beats && !ties) return `${name}: a losing roll, it beats no roll (if nobody scores, a roll-off decides)`;
  return `${name}: beats ${percent(beats)} of rolls, ties ${percent(ties)}`;
}

const TO_COME = ["", "One die", "Two dice", "Three dice", "Four dice"];

/**
 * What the dice so far are worth before the fourth (stud's streets), from exact odds over
 * the dice still to come: "Two dice to come: beats 48 % of rolls on average". "" unless
 * one to three dice.
 */
export function partialStrength(dice) {
  if (!dice || dice.length < 1 || dice.length > 3) return "";
  const beats = PARTIAL_ODDS[[...dice].sort((a, b) => a - b).join("")];
  return `${TO_COME[4 - dice.length]} to come: beats ${percent(beats)} of rolls on average`;
}

/** What four dice are worth on average once the die at `index` is rolled again, in tenths. */
export function rerollBeats(dice, index) {
  const kept = dice.filter((_, i) => i !== index).sort((a, b) => a - b);
  return PARTIAL_ODDS[kept.join("")];
}

/** The same in words, for a reroll button: "then beats 61 % of rolls on average". */
export function rerollWords(dice, index) {
  return `then beats ${percent(rerollBeats(dice, index))} of rolls on average`;
}

/**
 * Draw's choice, before a reroll: what rerolling each face would make the four dice worth
 * on average, "If you reroll a 1: beats 61 % of rolls on average; a 3: 40 %; a 5: 38 %".
 * "" unless four dice.
 */
export function rerollStrength(dice) {
  if (!dice || dice.length !== 4) return "";
  const faces = [...new Set(dice)].sort((a, b) => a - b);
  return faces.map((face, i) => {
    const figure = percent(rerollBeats(dice, dice.indexOf(face)));
    return i ? `; a ${face}: ${figure}` : `If you reroll a ${face}: beats ${figure} of rolls on average`;
  }).join("");
}
