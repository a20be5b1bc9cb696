// The library against the real server: a full hand of every variant, played by
// the example bot (examples/play.mjs) with every hand's dice checked.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { play } from "../examples/play.mjs";
import { startServer } from "./server.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

for (const variant of ["simple", "liars", "draw", "stud"]) {
  test(`a full hand of ${variant} tali, its dice verified`, async () => {
    const result = await play({ url: server.url, variant, hands: 2, name: `JS ${variant}` });
    assert.deepEqual(result.problems, []);
    assert.equal(result.hands, 2);
    assert.equal(result.verified, 2);
  });
}

test("a full hand of liars' tali with batches: fewer frames than messages, the same play", async () => {
  const result = await play({ url: server.url, variant: "liars", hands: 2, name: "JS batch", batch: true });
  assert.deepEqual(result.problems, []);
  assert.equal(result.hands, 2);
  assert.equal(result.verified, 2);
  assert.ok(result.received.frames < result.received.messages, JSON.stringify(result.received));
});
