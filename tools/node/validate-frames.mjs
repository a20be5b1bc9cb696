// Validates frames against the union schemas protocol/schema/client.json and
// server.json with Ajv, both as a draft-07 validator (Ajv's default class) and as
// a draft 2020-12 one (Ajv2020), in strict mode: an unknown keyword (such as an
// OpenAPI `discriminator`) is an error, not something to skip.
//
//   node validate-frames.mjs SCHEMA_DIR CASES.json
//
// CASES.json: [{"direction": "client" | "server" | "batch", "frame": ...}, ...] ("batch":
// against batch.json, the array form, when SCHEMA_DIR has it). Prints one
// line per case and validator, "<index> <validator> valid" or "<index> <validator>
// invalid <first error>", and exits 0 (the caller judges the verdicts).

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };

const [schemaDir, casesFile] = process.argv.slice(2);
const load = (name) => JSON.parse(readFileSync(join(schemaDir, name), "utf8"));

// Each schema is compiled when a case first asks for it (all three, by both validators: some
// 2 s of CPU): a run of client and server frames does not compile batch.json.
const makers = {
  "ajv-draft-07": () => new Ajv({ strict: true, allErrors: false }),
  "ajv-2020-12": () => {
    const ajv = new Ajv2020({ strict: true, allErrors: false });
    ajv.addMetaSchema(draft07); // the documents name draft-07 as their dialect
    return ajv;
  },
};
const files = {
  client: "client.json",
  server: "server.json",
  ...(existsSync(join(schemaDir, "batch.json")) ? { batch: "batch.json" } : {}),
};
const validators = Object.fromEntries(
  Object.entries(makers).map(([label, make]) => {
    const ajv = make();
    const compiled = {};
    const get = (direction) => (compiled[direction] ??= ajv.compile(load(files[direction])));
    return [label, get];
  }),
);

const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const lines = [];
cases.forEach(({ direction, frame }, index) => {
  for (const [label, get] of Object.entries(validators)) {
    const validate = get(direction);
    if (validate(frame)) lines.push(`${index} ${label} valid`);
    else {
      const [first] = validate.errors;
      lines.push(`${index} ${label} invalid ${first.instancePath || "/"} ${first.message}`);
    }
  }
});
console.log(lines.join("\n"));
