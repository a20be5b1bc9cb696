// Runs clients/js/src/fairness.js on a file of cases (the published vectors,
// or random cases written by the Python test) and prints what it computed, as
// JSON, for the Python test to compare: node fairness_runner.mjs CASES.json
import { readFile } from "node:fs/promises";

const fairness = await import(new URL("../../clients/js/src/fairness.js", import.meta.url));
const cases = JSON.parse(await readFile(process.argv[2], "utf8"));

const out = { valid: [], tampered: [], sampling: [], entropy: [] };
for (const c of cases.valid ?? []) {
  const rolls = [];
  for (const roll of c.rolls) {
    rolls.push({
      message: fairness.toHex(
        fairness.diceMessage(c.room, c.hand, c.player, roll.first_index, roll.uses_entropy, 0),
      ),
      faces: await fairness.rollFaces(
        c.secret, c.room, c.hand, c.player, roll.first_index, roll.count, roll.uses_entropy,
      ),
    });
  }
  out.valid.push({
    commitment: await fairness.commitment(c.secret),
    dice: await fairness.deriveDice(
      c.secret, c.room, c.hand, c.player,
      c.rolls.map((roll) => ({ count: roll.count, entropy: roll.entropy })),
    ),
    uses_entropy: fairness.effectiveEntropies(c.rolls.map((roll) => roll.entropy)),
    rolls,
    verified: await fairness.verify({ ...c, rolls: c.rolls.map(({ faces, entropy }) => ({ faces, entropy })) }),
  });
}
for (const c of cases.tampered ?? []) out.tampered.push(await fairness.verify(c));
for (const s of cases.sampling ?? []) {
  const blocks = s.blocks.map((hex) => Uint8Array.from(hex.match(/../g), (pair) => parseInt(pair, 16)));
  out.sampling.push(await fairness.facesFromBlocks((i) => blocks[i], s.count));
}
out.bots = [];
for (const c of cases.bots ?? []) {
  out.bots.push({
    table_message: fairness.toHex(fairness.tableMessage(c.room, c.hand, c.entropy_from)),
    table_entropy: await fairness.tableEntropy(c.room, c.hand, c.entropy_from),
    verified: await fairness.verifyBot({ ...c, rolls: c.rolls.map((r) => r.faces), entropyFrom: c.entropy_from }),
    sources_ok: fairness.sourcesProblem(
      c.entropy_from, c.entropy_from.map((s) => s.player),
      new Map(c.entropy_from.map((s) => [s.player, s.entropy])),
    ) === null,
  });
}
out.bots_tampered = [];
for (const c of cases.bots_tampered ?? []) {
  out.bots_tampered.push(await fairness.verifyBot({ ...c, entropyFrom: c.entropy_from }));
}
for (let i = 0; i < 8; i++) out.entropy.push(fairness.newEntropy());
process.stdout.write(JSON.stringify(out));
