// A bot that plays tali with this library: it opens a room of a variant, seats one
// of the server's bots against itself, plays the hands asked for (taking a safe
// legal action each turn, with fresh entropy for every roll) and checks every
// hand's dice. Run it against a server:
//
//   node examples/play.mjs ws://127.0.0.1:8765/ liars 3
//
// It prints one JSON line per hand and exits 1 if anything went wrong.

import { fileURLToPath } from "node:url";
import { FairDiceChecker, TaliClient, legal, memoryTokenStore, newEntropy } from "tali-client";

const PREFERENCE = ["roll", "ante", "check", "call", "pass", "fold"];

/**
 * @param {{url: string, variant: string, hands: number, name?: string, batch?: boolean}} options
 *   `batch`: ask for batches (several messages a frame, protocol 2.3)
 * @returns {Promise<{hands: number, verified: number, problems: string[], received: {frames: number, messages: number}}>}
 */
export async function play({ url, variant, hands, name = "Example", batch = false }) {
  const client = new TaliClient({ url, name, tokenStore: memoryTokenStore(), batch });
  const problems = [];
  const played = []; // the numbers of the hands played, the first `hands` of them
  const verified = new Set();
  const verdicts = new Set(); // hands with a verdict, whatever it is
  let finish;
  const done = new Promise((resolve) => (finish = resolve));
  new FairDiceChecker(client, (verdict) => {
    verdicts.add(verdict.hand);
    if (verdict.status === "verified") verified.add(verdict.hand);
    else if (verdict.status === "failed") problems.push(`hand ${verdict.hand}: ${JSON.stringify(verdict.problems)}`);
  });
  client.on("your_turn", async (turn) => {
    if (played.length >= hands) return; // done: we are about to leave
    const offer = legal(turn);
    const choice = PREFERENCE.map((action) => offer.option(action)).find(Boolean) ?? offer.options[0];
    if (!choice) return;
    const message = { ...choice.message };
    if (message.type === "roll") message.entropy = newEntropy();
    const { type, ...fields } = message;
    try {
      await client.request(type, fields);
    } catch (error) {
      // A prompt the timer overtook is not an error of ours; anything else is.
      if (!["not_your_turn", "no_hand_in_progress", "not_in_hand"].includes(error.code)) {
        problems.push(`${type}: ${error.code} ${error.message}`);
      }
    }
  });
  client.on("hand_ended", (event) => {
    if (played.length >= hands) return;
    played.push(event.hand);
    console.log(JSON.stringify({ variant, hand: event.hand, stacks: event.stacks }));
    if (played.length === hands) finish();
  });

  await client.connect();
  const { room } = await client.request("create_room", {
    settings: { variant, turn_seconds: 600, next_hand_delay_seconds: 0 },
  });
  await client.request("join_room", { room, role: "player" });
  await client.request("add_bot", { room, level: "beginner" });
  await done;
  // Our own opening of a hidden hand (liars: dice_opened) comes after its hand_ended.
  for (let i = 0; i < 100 && !played.every((hand) => verdicts.has(hand)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await client.request("leave_room", { room });
  client.close();
  return {
    hands: played.length,
    verified: played.filter((hand) => verified.has(hand)).length,
    problems,
    received: client.received,
  };
}

if (fileURLToPath(import.meta.url) === process.argv[1]) {
  const [url, variant = "simple", hands = "1"] = process.argv.slice(2);
  const result = await play({ url, variant, hands: Number(hands) });
  console.log(JSON.stringify(result));
  process.exit(result.problems.length || result.verified < result.hands ? 1 : 0);
}
