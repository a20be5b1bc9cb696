// Names of tali rolls (protocol/RULES.md §1.2), looked up in the table the server
// generates from its own scoring: the client never re-implements the rules.

import { ROLL_NAMES } from "./facts.js";

export function rollName(dice) {
  if (!dice || dice.length !== 4) return "";
  return ROLL_NAMES[[...dice].sort((a, b) => a - b).join("")] ?? "";
}
