// Names of tali rolls (protocol/RULES.md §1.2), looked up in the table the server
// generates from its own scoring: the client never re-implements the rules.

import { ROLL_NAMES } from "./facts.js";

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
