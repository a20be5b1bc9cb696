// Names of tali rolls (protocol/RULES.md §1.2), looked up in the table the server
// generates from its own scoring: the client never re-implements the rules.

import { ROLL_NAMES, ROLL_ODDS } from "./facts.js";

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
