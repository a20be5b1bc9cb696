// Validates an AsyncAPI document with the AsyncAPI project's parser.
// Usage: node validate-asyncapi.mjs path/to/asyncapi.json
// Prints every diagnostic; exits 1 on any error, or if the document does not parse.
import { Parser, fromFile } from '@asyncapi/parser';

const path = process.argv[2];
if (!path) {
  console.error('usage: node validate-asyncapi.mjs <asyncapi document>');
  process.exit(2);
}
const parser = new Parser();
const { document, diagnostics } = await fromFile(parser, path).parse();
const severities = ['error', 'warning', 'info', 'hint'];
for (const d of diagnostics) {
  console.log(`${severities[d.severity] ?? d.severity}: ${d.code}: ${d.message} at ${d.path.join('.')}`);
}
const errors = diagnostics.filter((d) => d.severity === 0);
if (!document || errors.length) {
  console.error(`invalid: ${errors.length} error(s)`);
  process.exit(1);
}
console.log(
  `valid AsyncAPI ${document.version()}: ${document.allMessages().length} messages, ` +
    `${document.operations().length} operations, ${document.channels().length} channel(s)`,
);
