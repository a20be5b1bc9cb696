// TaliClient against the real server (requests, errors, resume, takeover) and
// against a scripted WebSocket server (seq gaps, the heartbeat's and the hello's deadlines).

import assert from "node:assert/strict";
import net from "node:net";
import { after, before, test } from "node:test";
import { WebSocketServer } from "ws";
import { TaliClient, TaliError, memoryTokenStore, storageTokenStore, PROTOCOL_VERSION } from "../src/index.js";
import { startServer } from "./server.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

const quick = { backoff: { initial: 20, max: 100 }, heartbeat: { interval: 0 } };

test("hello gives a welcome and stores the token; a refused request rejects with its code", async () => {
  const tokens = memoryTokenStore();
  const client = new TaliClient({ url: server.url, name: "Aulus", tokenStore: tokens, ...quick });
  const welcome = await client.connect();
  assert.equal(welcome.type, "welcome");
  assert.equal(welcome.name, "Aulus");
  assert.equal(welcome.protocol.split(".")[0], PROTOCOL_VERSION.split(".")[0]);
  assert.equal(tokens.get(), welcome.token);
  assert.equal(client.playerId, welcome.player_id);
  const error = await client.request("join_room", { room: "r_nowhere", role: "player" }).catch((e) => e);
  assert.ok(error instanceof TaliError);
  assert.equal(error.code, "room_not_found");
  assert.equal(error.reply.room, "r_nowhere");
  const pong = await client.request("ping", { data: "x" });
  assert.equal(pong.data, "x");
  client.close();
});

test("a dropped connection reconnects and resumes: same player, the room's snapshot", async () => {
  const client = new TaliClient({ url: server.url, name: "Brutus", tokenStore: memoryTokenStore(), ...quick });
  const first = await client.connect();
  const { room } = await client.request("create_room", { settings: { variant: "simple" } });
  await client.request("join_room", { room, role: "player" });
  const snapshot = client.next("snapshot", (s) => s.room === room);
  const welcomed = client.next("welcome");
  client.ws.close(4000, "the test drops it"); // not client.close(): a drop, not a goodbye
  const again = await welcomed;
  assert.equal(again.resumed, true);
  assert.equal(again.player_id, first.player_id);
  assert.deepEqual(again.rooms, [room]);
  assert.equal((await snapshot).you, first.player_id);
  client.close();
});

test("a takeover (close 4001) is not fought over: no reconnect, status replaced", async () => {
  const tokens = memoryTokenStore();
  const one = new TaliClient({ url: server.url, name: "Cassia", tokenStore: tokens, ...quick });
  await one.connect();
  const replaced = one.next("status", (s) => s.status === "replaced");
  const two = new TaliClient({ url: server.url, tokenStore: tokens, ...quick });
  const welcome = await two.connect();
  assert.equal(welcome.resumed, true);
  await replaced;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(one.status, "replaced");
  assert.equal(one.ws, null);
  two.close();
});

test("the token store is pluggable: a Web Storage keeps it under its key", () => {
  const data = new Map();
  const storage = {
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => data.set(k, v),
    removeItem: (k) => data.delete(k),
  };
  const store = storageTokenStore(storage, "my.key");
  assert.equal(store.get(), null);
  store.set("abc");
  assert.equal(data.get("my.key"), "abc");
  store.clear();
  assert.equal(store.get(), null);
});

test("reconnect delays grow by the factor up to the cap, with jitter", () => {
  const client = new TaliClient({ url: "ws://127.0.0.1:9/", backoff: { initial: 100, max: 1000, factor: 2, jitter: 0.25 } });
  for (const [attempt, base] of [[1, 100], [2, 200], [3, 400], [4, 800], [5, 1000], [9, 1000]]) {
    for (let i = 0; i < 20; i++) {
      const delay = client.retryDelay(attempt);
      assert.ok(delay >= base * 0.75 && delay <= base * 1.25, `${attempt}: ${delay}`);
    }
  }
});

/** A scripted server: answers hello with welcome, then runs `script(socket, frames)`;
 * `refuse`: a hello with `capabilities` is refused with bad_message, as a 2.2 server does. */
async function fakeServer(script, { refuse = false, withWelcome = [], unanswered = 0 } = {}) {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => wss.on("listening", resolve));
  const connections = [];
  wss.on("connection", (socket) => {
    const frames = [];
    connections.push(frames);
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data));
      frames.push(frame);
      if (frame.type === "hello" && refuse && frame.capabilities) {
        socket.send(JSON.stringify({ type: "error", id: frame.id, code: "bad_message", message: "capabilities: Extra inputs are not permitted", closes: false }));
        return;
      }
      if (frame.type === "hello" && connections.length <= unanswered) return; // a hung node
      if (frame.type === "hello") {
        const send = withWelcome.length ? (welcome) => socket.send(`[${welcome},${withWelcome.join(",")}]`) : (welcome) => socket.send(welcome);
        send(JSON.stringify({
          type: "welcome", id: frame.id, server_version: "fake", protocol: "2.1", player_id: "p_me",
          name: "Me", token: "T".repeat(43), resumed: connections.length > 1, rooms: [],
          limits: { max_frame_bytes: 4096, messages_per_second: 20, message_burst: 40, abuse_limit: 50, chat_per_minute: 20, max_rooms_per_player: 3 },
          capabilities: frame.capabilities ?? [],
        }));
      }
      script(socket, frame, connections.length);
    });
  });
  return { url: `ws://127.0.0.1:${wss.address().port}/`, connections, close: () => new Promise((r) => wss.close(r)) };
}

const event = (seq, extra = {}) => JSON.stringify({ type: "chat", room: "r_1", seq, player: "p_x", name: "X", text: `#${seq}`, ...extra });

test("a gap in seq asks for a resync and holds the room's events until its snapshot", async () => {
  const fake = await fakeServer((socket, frame) => {
    if (frame.type === "hello") {
      for (const seq of [5, 6, 6, 9, 10]) socket.send(event(seq)); // 6 again, then 7 and 8 missing
    }
    if (frame.type === "resync") {
      socket.send(JSON.stringify({ type: "result", id: frame.id, request: "resync", room: "r_1" }));
      socket.send(JSON.stringify({ type: "snapshot", room: "r_1", seq: 10 }));
      socket.send(event(10));
      socket.send(event(11));
    }
  });
  const client = new TaliClient({ url: fake.url, tokenStore: memoryTokenStore(), ...quick });
  const seen = [];
  client.on("room_event", (e) => seen.push(e.seq));
  const resync = client.next("resync");
  await client.connect();
  assert.deepEqual(await resync, { room: "r_1", from: 6, to: 9 });
  await client.next("chat", (e) => e.seq === 11);
  assert.deepEqual(seen, [5, 6, 11]);
  assert.deepEqual(fake.connections[0].filter((f) => f.type === "resync").map((f) => f.room), ["r_1"]);
  client.close();
  await fake.close();
});

test("a pong that misses its deadline gives the connection up and reconnects", async () => {
  const fake = await fakeServer((socket, frame, connection) => {
    if (frame.type === "ping" && connection > 1) {
      socket.send(JSON.stringify({ type: "pong", id: frame.id, data: frame.data }));
    } // the first connection never answers a ping: a hung server
  });
  const client = new TaliClient({
    url: fake.url, tokenStore: memoryTokenStore(), backoff: { initial: 10, max: 50 },
    heartbeat: { interval: 50, timeout: 100 },
  });
  const lapsed = client.next("heartbeat_lapsed");
  await client.connect();
  const { waited } = await lapsed;
  assert.ok(waited >= 100);
  const welcome = await client.next("welcome");
  assert.equal(welcome.resumed, true);
  assert.equal(fake.connections[1][0].token, "T".repeat(43));
  client.close();
  await fake.close();
});

test("a hello that is never answered gives the connection up and reconnects with the backoff", async () => {
  const fake = await fakeServer(() => {}, { unanswered: 1 }); // the first connection: taken, then silence
  const client = new TaliClient({
    url: fake.url, tokenStore: memoryTokenStore(), backoff: { initial: 10, max: 50 },
    heartbeat: { interval: 0 }, helloTimeout: 100,
  });
  const statuses = [];
  client.on("status", ({ status }) => statuses.push(status));
  const closed = client.next("closed");
  const started = Date.now();
  await assert.rejects(client.connect("Me"), (error) => error.code === "disconnected");
  assert.ok(Date.now() - started >= 100);
  assert.deepEqual(await closed, { code: 4000, reason: "no welcome in time" });
  const welcome = await client.next("welcome");
  assert.equal(welcome.name, "Me");
  assert.equal(fake.connections.length, 2);
  assert.equal(fake.connections[1][0].name, "Me");
  assert.deepEqual(statuses, ["connecting", "offline", "offline", "open"]);
  // Welcomed: the deadline is gone with it (no give-up later on).
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(client.status, "open");
  assert.equal(fake.connections.length, 2);
  client.close();
  await fake.close();
});

test("a connection whose opening is never answered (a stalled proxy) is given up too", async () => {
  const taken = [];
  const proxy = net.createServer((socket) => taken.push(socket)); // accepts, then silence
  await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const client = new TaliClient({
    url: `ws://127.0.0.1:${proxy.address().port}/`, tokenStore: memoryTokenStore(),
    backoff: { initial: 10, max: 20 }, heartbeat: { interval: 0 }, helloTimeout: 100,
  });
  await assert.rejects(client.connect("Me"), (error) => error.code === "disconnected");
  assert.equal(client.status, "offline");
  while (taken.length < 2) await new Promise((resolve) => setTimeout(resolve, 20)); // tried again
  client.close();
  for (const socket of taken) socket.destroy();
  await new Promise((resolve) => proxy.close(resolve));
});

test("auth: a function's fresh sign-in token goes with each new session's hello, never with a resume", async () => {
  const fake = await fakeServer(() => {});
  let fetched = 0;
  const auth = async () => `header.claims-${++fetched}.signature`;
  const client = new TaliClient({ url: fake.url, auth, tokenStore: memoryTokenStore(), ...quick });
  await client.connect();
  const welcomed = client.next("welcome");
  client.ws.close(4000, "the test drops it");
  assert.equal((await welcomed).resumed, true);
  const hellos = fake.connections.map((frames) => frames.find((f) => f.type === "hello"));
  assert.equal(hellos[0].auth, "header.claims-1.signature");
  assert.equal(hellos[0].token, undefined);
  assert.equal(hellos[1].auth, undefined);
  assert.equal(hellos[1].token, "T".repeat(43));
  assert.equal(fetched, 1);
  client.close();
  // A plain token (a string) is sent as it is.
  const plain = new TaliClient({ url: fake.url, auth: "a.b.c", tokenStore: memoryTokenStore(), ...quick });
  await plain.connect();
  assert.equal(fake.connections[2].find((f) => f.type === "hello").auth, "a.b.c");
  plain.close();
  await fake.close();
});

test("a batch is taken apart in order: seq checks, resync and replies as if each had come alone", async () => {
  const batch = (...messages) => `[${messages.join(",")}]`;
  const fake = await fakeServer((socket, frame) => {
    if (frame.type === "hello") {
      // 6 again, then 7 and 8 missing; another room's events keep their own order.
      socket.send(batch(event(5), event(6), event(6), event(1, { room: "r_2" }), event(9), event(2, { room: "r_2" })));
      socket.send(event(10));
    }
    if (frame.type === "resync") {
      socket.send(batch(
        JSON.stringify({ type: "result", id: frame.id, request: "resync", room: "r_1" }),
        JSON.stringify({ type: "snapshot", room: "r_1", seq: 10 }),
        event(10),
        JSON.stringify({ type: "something_newer", room: "r_1" }),
        event(11),
      ));
    }
  });
  const client = new TaliClient({ url: fake.url, tokenStore: memoryTokenStore(), batch: true, ...quick });
  const seen = [];
  client.on("room_event", (e) => seen.push(`${e.room}:${e.seq}`));
  const resync = client.next("resync");
  const welcome = await client.connect();
  assert.deepEqual(welcome.capabilities, ["batch"]);
  assert.deepEqual(fake.connections[0][0].capabilities, ["batch"]);
  assert.deepEqual(await resync, { room: "r_1", from: 6, to: 9 });
  await client.next("chat", (e) => e.seq === 11);
  assert.deepEqual(seen, ["r_1:5", "r_1:6", "r_2:1", "r_2:2", "r_1:11"]);
  assert.deepEqual(client.received, { frames: 4, messages: 13 }); // welcome, 6, 1, 5
  client.close();
  await fake.close();
});

test("batch against a 2.2 server: refused capabilities, hello again without them", async () => {
  const fake = await fakeServer(() => {}, { refuse: true });
  const client = new TaliClient({ url: fake.url, tokenStore: memoryTokenStore(), batch: true, ...quick });
  const welcome = await client.connect();
  assert.deepEqual(welcome.capabilities, []);
  assert.deepEqual(fake.connections[0].map((f) => f.capabilities ?? null), [["batch"], null]);
  client.close();
  await fake.close();
});

test("batch against the real server: granted, and one frame per action's messages", async () => {
  const client = new TaliClient({ url: server.url, name: "Batched", tokenStore: memoryTokenStore(), batch: true, ...quick });
  const welcome = await client.connect();
  assert.deepEqual(welcome.capabilities, ["batch"]);
  const created = await client.request("create_room", { settings: { variant: "liars" } });
  const snapshot = client.next("snapshot");
  const start = { ...client.received };
  await client.request("join_room", { room: created.room, role: "player" });
  await snapshot;
  // player_joined, the result and the snapshot: one frame.
  assert.equal(client.received.frames - start.frames, 1);
  assert.equal(client.received.messages - start.messages, 3);
  client.close();
});

test("a batch that carries the welcome: what follows it waits until the session is taken in", async () => {
  const snapshot = JSON.stringify({ type: "snapshot", room: "r_1", seq: 4 });
  const fake = await fakeServer(() => {}, { withWelcome: [event(4), snapshot, event(5)] });
  const client = new TaliClient({ url: fake.url, tokenStore: memoryTokenStore(), batch: true, ...quick });
  const order = [];
  for (const type of ["welcome", "chat", "snapshot"]) client.on(type, (m) => order.push(`${type}${m.seq ?? ""}`));
  await client.connect();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(order, ["welcome", "chat4", "snapshot4", "chat5"]);
  client.close();
  await fake.close();
});
