// Names of tali rolls, as the rules document defines them (protocol/RULES.md §1).
// The server names every roll it decides; this only names public dice for display.

const VULTURES = { 6: "Vultures (6s)", 4: "Vultures (4s)", 3: "Vultures (3s)", 1: "The Dog" };

export function rollName(dice) {
  if (!dice || dice.length !== 4) return "";
  const sorted = [...dice].sort((a, b) => a - b).join(",");
  if (sorted === "1,3,4,6") return "Venus";
  if (dice.every((d) => d === dice[0]) && VULTURES[dice[0]]) return VULTURES[dice[0]];
  if (dice.includes(6)) return `Senio ${dice.reduce((sum, d) => sum + (d === 2 || d === 5 ? 0 : d), 0)}`;
  return "no score";
}
