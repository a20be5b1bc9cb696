// Compiled (never run) by scripts/check-types.mjs: the declarations serve a
// TypeScript author, and refuse what the protocol refuses.
import { TaliClient, legal, memoryTokenStore, type TaliError } from "tali-client";
import type { ReplyMap, ServerBatch, YourTurn, Welcome } from "tali-client/messages";

const client = new TaliClient({ url: "ws://localhost:8765/", tokenStore: memoryTokenStore() });

export async function usage(): Promise<number> {
  const welcome: Welcome = await client.connect("Aulus");
  const created: ReplyMap["create_room"] = await client.request("create_room", {
    settings: { variant: "liars", ante: 2 },
  });
  const list = await client.request("list_rooms", { variant: "stud" });
  const pong = await client.request("ping", { data: "x" });
  client.on("your_turn", (turn: YourTurn) => {
    const offer = legal(turn);
    const amount: number | null = offer.option("raise")?.min ?? null;
    console.log(turn.legal.actions.includes("raise"), amount, offer.explain());
  });
  client.on("bet_placed", (event) => console.log(event.total, event.all_in));
  client.on("status", ({ status }) => console.log(status));
  // @ts-expect-error: a room setting's variant is a closed set
  await client.request("create_room", { settings: { variant: "poker" } });
  // @ts-expect-error: bet takes an amount
  await client.request("bet", { room: "r", amont: 5 });
  // @ts-expect-error: no such message
  client.on("dice_exploded", () => {});
  // A batch frame (protocol 2.3) is two or more server messages.
  const batch: ServerBatch = [pong, pong, welcome];
  // @ts-expect-error: a batch holds two messages at least
  const alone: ServerBatch = [pong];
  // @ts-expect-error: a batch holds server messages
  const asked: ServerBatch = [pong, { type: "ping" }];
  const failure: TaliError | null = null;
  return welcome.limits.max_frame_bytes + list.rooms.length + (pong.data?.length ?? 0) +
    (created.room?.length ?? 0) + (failure === null ? 0 : 1) + batch.length + alone.length +
    asked.length;
}
