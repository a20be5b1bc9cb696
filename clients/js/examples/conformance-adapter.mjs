// This library's adapter for the conformance kit's client checks:
//
//   python -m tali_conformance client -- node examples/conformance-adapter.mjs
//
// It connects to $TALI_URL as $TALI_NAME, answers each your_turn with a legal
// action (fresh entropy on rolls), checks every hand's dice, and prints what it
// receives as JSON lines (see tali_conformance/client_checks.py).

import { FairDiceChecker, TaliClient, TaliError, legal, memoryTokenStore, newEntropy } from "tali-client";

const PREFERENCE = ["roll", "check", "call", "ante", "pass", "fold"];
const env = (name, fallback) => Number(process.env[name] ?? fallback);
const emit = (record) => process.stdout.write(`${JSON.stringify(record)}\n`);

const client = new TaliClient({
  url: process.env.TALI_URL,
  name: process.env.TALI_NAME ?? "Adapter",
  tokenStore: memoryTokenStore(),
  backoff: { initial: env("TALI_BACKOFF_MS", 500), max: env("TALI_BACKOFF_MAX_MS", 10000) },
  heartbeat: { interval: env("TALI_HEARTBEAT_MS", 15000), timeout: env("TALI_HEARTBEAT_TIMEOUT_MS", 10000) },
  batch: true, // the kit checks that batches are taken apart
});
client.on("welcome", (w) => emit({ event: "welcome", player_id: w.player_id, resumed: w.resumed }));
client.on("room_event", (e) => emit({ event: "room_event", room: e.room, seq: e.seq, type: e.type }));
client.on("snapshot", (s) => emit({ event: "snapshot", room: s.room, seq: s.seq }));
new FairDiceChecker(client, (v) => emit({ event: "fair", room: v.room, hand: v.hand, status: v.status }));
client.on("your_turn", async (turn) => {
  const offer = legal(turn);
  const option = PREFERENCE.map((a) => offer.option(a)).find(Boolean);
  if (!option) return;
  const { type, ...fields } = option.message;
  if (type === "roll" || type === "reroll") fields.entropy = newEntropy();
  try {
    await client.request(type, fields);
  } catch (error) {
    if (error instanceof TaliError) emit({ event: "refused", type, code: error.code });
  }
});
const alive = setInterval(() => {}, 1 << 30); // run until told to stop, connected or not
process.on("SIGTERM", () => {
  clearInterval(alive);
  client.close();
  process.exit(0);
});
client.connect().catch((error) => emit({ event: "connect_failed", code: error.code ?? String(error) }));
