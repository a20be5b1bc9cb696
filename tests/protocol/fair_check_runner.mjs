// Runs clients/js/src/fair-hand.js's checkHand on hands written by the Python test
// and prints each verdict as JSON: node fair_check_runner.mjs HANDS.json
import { readFile } from "node:fs/promises";

const { checkHand } = await import(new URL("../../clients/js/src/fair-hand.js", import.meta.url));
const hands = JSON.parse(await readFile(process.argv[2], "utf8"));
const out = [];
for (const hand of hands) out.push(await checkHand(hand));
process.stdout.write(JSON.stringify(out));
