// Validates AsyncAPI documents with the AsyncAPI project's parser.
// Usage: node validate-asyncapi.mjs path/to/asyncapi.json [another.json ...]
// For each document in turn: a line "== <path>", every diagnostic, then "valid AsyncAPI
// ..." or "invalid: <n> error(s)". Exits 1 if any document has an error or does not parse.
// Several documents in one run share one start of the parser (some 2 s of CPU).
import { Parser, fromFile } from '@asyncapi/parser';

const paths = process.argv.slice(2);
if (!paths.length) {
  console.error('usage: node validate-asyncapi.mjs <asyncapi document> [...]');
  process.exit(2);
}
const parser = new Parser();
const severities = ['error', 'warning', 'info', 'hint'];
let failed = false;
for (const path of paths) {
  console.log(`== ${path}`);
  let document;
  let diagnostics;
  try {
    ({ document, diagnostics } = await fromFile(parser, path).parse());
  } catch (error) {
    console.log(`invalid: ${error}`);
    failed = true;
    continue;
  }
  for (const d of diagnostics) {
    console.log(`${severities[d.severity] ?? d.severity}: ${d.code}: ${d.message} at ${d.path.join('.')}`);
  }
  const errors = diagnostics.filter((d) => d.severity === 0);
  if (!document || errors.length) {
    console.log(`invalid: ${errors.length} error(s)`);
    failed = true;
    continue;
  }
  console.log(
    `valid AsyncAPI ${document.version()}: ${document.allMessages().length} messages, ` +
      `${document.operations().length} operations, ${document.channels().length} channel(s)`,
  );
}
process.exit(failed ? 1 : 0);
