// A copy of clients/js/src/client.js, made by `python -m server.devtools.client_facts`: edit the original.
// The tali protocol client (protocol/README.md): one WebSocket, hello and resume
// with a pluggable token store, requests with ids answered by promises, events by
// type, seq tracking per room with resync on a gap, an application-level
// heartbeat (ping with a deadline), reconnect with backoff, a room played at
// another node followed there, and batches (several messages a frame, protocol 2.3)
// taken apart. No dependency in the browser; in Node 20 it uses
// the optional `ws` package (Node 22+ has a WebSocket of its own).

import { CLOSE, DIRECT_REPLIES, PROTOCOL_VERSION } from "./protocol.js";
import { defaultTokenStore } from "./tokens.js";

/** @typedef {import("../types/messages.js").ServerMessageMap} ServerMessageMap */
/** @typedef {import("../types/messages.js").ServerMessage} ServerMessage */
/** @typedef {import("../types/messages.js").ClientMessageType} ClientMessageType */
/** @typedef {import("../types/messages.js").ReplyMap} ReplyMap */
/** @typedef {import("../types/messages.js").RoomEvent} RoomEvent */
/** @typedef {import("../types/messages.js").Welcome} Welcome */
/** @typedef {import("../types/messages.js").Snapshot} Snapshot */
/** @typedef {import("../types/messages.js").Error} ErrorMessage */
/** @typedef {import("./tokens.js").TokenStore} TokenStore */

/**
 * @typedef {"idle" | "connecting" | "open" | "reconnecting" | "offline" | "replaced" | "closed"} Status
 *
 * @typedef {object} ClientEvents  what `on` delivers besides the server's messages
 * @property {{status: Status, attempt: number}} status  the connection's state changed
 * @property {RoomEvent} room_event  a room event that passed the seq check, in seq order
 * @property {{room: string, from: number, to: number}} resync  a gap in seq: a resync was sent
 * @property {{code: number, reason: string}} closed  the WebSocket closed
 * @property {TaliError} session_lost  the server forgot the session: a new one was started
 * @property {ErrorMessage} server_error  an error that answers no request
 * @property {{sent: number, waited: number}} heartbeat_lapsed  no pong within the deadline: status
 *   "offline" until a new connection is welcomed
 * @property {{room: string, from: number, to: number}} rewound  a snapshot below the last seq
 *   seen in its room: the server lost events it had sent (the snapshot is the truth now)
 * @property {Record<string, unknown>} sent  a frame this client sent
 * @property {Welcome} welcome  the session is open (after a resume too)
 *
 * @typedef {ServerMessageMap & ClientEvents & {"*": ServerMessage}} EventMap
 *   `"*"`: every server message, known or not
 */

/** A refused request: `code` is the protocol's stable error code (or "disconnected"). */
export class TaliError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {ErrorMessage | null} [reply]
   */
  constructor(code, message, reply = null) {
    super(message);
    this.name = "TaliError";
    this.code = code;
    this.reply = reply;
  }
}

const REPLIES = new Set(DIRECT_REPLIES);
const OPEN = 1; // WebSocket.OPEN, the same in browsers and in ws

/**
 * How long a new connection may go without its `welcome`, ms (the default of
 * `helloTimeout`), counted from the moment it is made: a server that took the
 * connection and says nothing (a hung node, a proxy that accepted and stalled) is
 * given up, as a ping without its pong is, and the client reconnects with its backoff.
 */
export const HELLO_TIMEOUT = 10000;

/**
 * @typedef {object} Backoff
 * @property {number} [initial]  first delay, ms (default 500)
 * @property {number} [max]  longest delay, ms (default 10000)
 * @property {number} [factor]  growth per attempt (default 2)
 * @property {number} [jitter]  plus or minus this fraction of each delay, at random (default 0.25)
 *
 * @typedef {object} Heartbeat
 * @property {number} [interval]  a ping this often, ms (default 15000; 0: no heartbeat)
 * @property {number} [timeout]  the pong's deadline, ms (default 10000)
 *
 * @typedef {object} ClientOptions
 * @property {string} url  e.g. "ws://localhost:8765/"
 * @property {string | null} [name]  the name to ask for in hello
 * @property {string | (() => string | Promise<string>) | null} [auth]  a sign-in token from
 *   the operator's site (protocol 2.2), or a function that fetches a fresh one: used for each
 *   new session (a token is good for one hello), never when a session is resumed
 * @property {TokenStore} [tokenStore]  where the session token is kept (default: localStorage
 *   in a browser, memory elsewhere)
 * @property {any} [WebSocket]  a WebSocket class (default: the platform's, else `ws`)
 * @property {Backoff} [backoff]
 * @property {Heartbeat} [heartbeat]
 * @property {number} [helloTimeout]  a new connection's deadline for its welcome, ms (default
 *   HELLO_TIMEOUT, 10000; 0: none): past it the connection is given up, status "offline", and
 *   the client reconnects with its backoff
 * @property {boolean} [reconnect]  reconnect and resume after a drop (default true)
 * @property {string} [protocol]  the version sent in hello (default this library's)
 * @property {boolean} [batch]  ask for the `batch` capability (protocol 2.3, default false): the
 *   server may then send several messages in one frame, a JSON array; they are delivered one
 *   by one, in order, exactly as if each had come alone (a 2.2 server that refuses the
 *   capability is asked again without it)
 */

export class TaliClient {
  /** @param {ClientOptions} options */
  constructor(options) {
    this.url = options.url;
    /** The address given: reconnects go back there, not to a node we were sent to. */
    this.home = options.url;
    this.name = options.name ?? null;
    this.auth = options.auth ?? null;
    this.tokenStore = options.tokenStore ?? defaultTokenStore();
    this.protocolVersion = options.protocol ?? PROTOCOL_VERSION;
    this.backoff = { initial: 500, max: 10000, factor: 2, jitter: 0.25, ...options.backoff };
    this.heartbeat = { interval: 15000, timeout: 10000, ...options.heartbeat };
    this.helloTimeout = options.helloTimeout ?? HELLO_TIMEOUT;
    this.reconnect = options.reconnect ?? true;
    this.batch = options.batch ?? false;
    /** WebSocket frames and messages received on every connection so far. */
    this.received = { frames: 0, messages: 0 };
    /** Messages read after a welcome, held until the hello that awaits it has taken the
     * session in (and emitted "welcome"): a batch may carry the snapshots with it. */
    /** @type {any[] | null} */
    this._held = null;
    /** @type {any} */
    this._WebSocket = options.WebSocket ?? null;
    /** @type {any} */
    this.ws = null;
    /** @type {Status} */
    this.status = "idle";
    /** @type {string | null} */
    this.playerId = null;
    /** @type {Welcome | null} */
    this.welcome = null;
    /** The last seq seen per room (the rooms whose events this client tracks). */
    /** @type {Map<string, number>} */
    this.lastSeq = new Map();
    /** Rooms waiting for the snapshot a resync asked for: their events are dropped. */
    /** @type {Set<string>} */
    this.resyncing = new Set();
    /** Rooms of a resumed session whose snapshot has not come yet. */
    /** @type {Set<string>} */
    this._resuming = new Set();
    this._nextId = 1;
    /** @type {Map<number, {resolve: (m: any) => void, reject: (e: TaliError) => void}>} */
    this._pending = new Map();
    /** @type {Map<string, Set<(message: any) => void>>} */
    this._handlers = new Map();
    this._attempt = 0;
    this._stopped = false;
    /** The server stopped answering (the heartbeat lapsed): said until it is back. */
    this._offline = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this._timer = undefined;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this._beat = undefined;
    /** The current connection's deadline for its welcome. */
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this._helloDeadline = undefined;
  }

  /**
   * Subscribe to a server message by its type ("your_turn", "snapshot", ...) or to
   * one of the client's own events ("room_event", "status", "*", ...). Returns the
   * function that unsubscribes.
   * @template {keyof EventMap} K
   * @param {K} type
   * @param {(message: EventMap[K]) => void} handler
   * @returns {() => void}
   */
  on(type, handler) {
    let set = this._handlers.get(type);
    if (!set) this._handlers.set(type, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /**
   * The next message of `type` (that `predicate` accepts), as a promise.
   * @template {keyof EventMap} K
   * @param {K} type
   * @param {(message: EventMap[K]) => boolean} [predicate]
   * @returns {Promise<EventMap[K]>}
   */
  next(type, predicate = () => true) {
    return new Promise((resolve) => {
      const off = this.on(type, (message) => {
        if (predicate(message)) {
          off();
          resolve(message);
        }
      });
    });
  }

  /**
   * Connect and say hello, resuming the stored session if there is one (the name
   * is then used only if the server has forgotten it). Resolves with `welcome`.
   * After a takeover (status "replaced"), calling it again takes the session back.
   * @param {string | null} [name]
   * @returns {Promise<Welcome>}
   */
  connect(name = null) {
    if (name !== null) this.name = name;
    this._attempt = 0;
    clearTimeout(this._timer);
    this._stopped = false;
    return this._open();
  }

  /** Close for good: no reconnect. */
  close() {
    this._stopped = true;
    clearTimeout(this._timer);
    clearTimeout(this._helloDeadline);
    this._stopHeartbeat();
    this.ws?.close(1000, "bye");
  }

  /** Close and forget the session (its token), e.g. to start again under another name. */
  async forget() {
    this.close();
    await this.tokenStore.clear();
    this.playerId = null;
    this.lastSeq.clear();
    this.resyncing.clear();
  }

  /**
   * Send a request; resolves with its direct reply, rejects with a TaliError. A
   * room played at another node (`room_elsewhere`) is followed there: connect to
   * the error's `url`, resume, and send the request again, once.
   * @template {ClientMessageType} T
   * @param {T} type
   * @param {import("../types/messages.js").RequestFields<T>} [fields]  the message without
   *   `type` and `id`
   * @returns {Promise<ReplyMap[T]>}
   */
  async request(type, fields = /** @type {any} */ ({})) {
    try {
      return await this._send(type, fields);
    } catch (error) {
      const url = error instanceof TaliError ? error.reply?.url : null;
      if (!(error instanceof TaliError) || error.code !== "room_elsewhere" || !url || type === "hello") {
        throw error;
      }
      await this.moveTo(url);
      return this._send(type, fields);
    }
  }

  /**
   * Connect to another node of the server (`url`) and resume the session there.
   * @param {string} url
   */
  moveTo(url) {
    this.url = url;
    const old = this.ws;
    this.ws = null; // the old connection's close is not a drop: no reconnect
    old?.close(1000, "moving to another node");
    this._attempt = 0;
    clearTimeout(this._timer);
    this._stopped = false;
    return this._open();
  }

  /**
   * @param {string} type
   * @param {Record<string, unknown>} fields
   * @returns {Promise<any>}
   */
  _send(type, fields) {
    const id = this._nextId++;
    const message = { type, id, ...fields };
    return new Promise((resolve, reject) => {
      const ws = this.ws;
      if (!ws || ws.readyState !== OPEN) {
        reject(new TaliError("disconnected", "not connected"));
        return;
      }
      this._pending.set(id, { resolve, reject });
      ws.send(JSON.stringify(message));
      this._emit("sent", message);
    });
  }

  /** @param {Status} status */
  _setStatus(status) {
    this.status = status;
    this._emit("status", { status, attempt: this._attempt });
  }

  /**
   * @param {string} type
   * @param {unknown} detail
   */
  _emit(type, detail) {
    for (const handler of [...(this._handlers.get(type) ?? [])]) {
      try {
        handler(detail);
      } catch (error) {
        // A handler's bug must not break the connection's bookkeeping.
        setTimeout(() => {
          throw error;
        });
      }
    }
  }

  async _socketClass() {
    if (this._WebSocket) return this._WebSocket;
    if (globalThis.WebSocket) return (this._WebSocket = globalThis.WebSocket);
    let ws;
    try {
      ws = await import("ws");
    } catch {
      throw new TaliError(
        "no_websocket",
        "no WebSocket here: on Node 20 install the ws package (npm install ws), or pass options.WebSocket",
      );
    }
    return (this._WebSocket = ws.WebSocket ?? ws.default);
  }

  /** @returns {Promise<Welcome>} */
  async _open() {
    this._setStatus(this._offline ? "offline" : this._attempt ? "reconnecting" : "connecting");
    const Socket = await this._socketClass();
    const ws = new Socket(this.url);
    this.ws = ws;
    clearTimeout(this._helloDeadline);
    return new Promise((resolve, reject) => {
      if (this.helloTimeout) {
        // Taken and never answered (neither the opening nor the hello): give it up.
        this._helloDeadline = setTimeout(() => {
          if (this._giveUp(ws, "no welcome in time")) reject(new TaliError("disconnected", "no welcome in time"));
        }, this.helloTimeout);
      }
      ws.addEventListener("open", async () => {
        try {
          resolve(await this._hello());
        } catch (error) {
          if (!(error instanceof TaliError)) {
            reject(error);
            return;
          }
          if (error.code === "room_elsewhere" && error.reply?.url) {
            // Our rooms are played at another node: resume there.
            this.moveTo(error.reply.url).then(resolve, reject);
            return;
          }
          if (error.code !== "session_not_found") {
            reject(error);
            return;
          }
          // The server forgot us (restart or long absence): start afresh.
          await this.tokenStore.clear();
          this._emit("session_lost", error);
          try {
            resolve(await this._hello());
          } catch (again) {
            reject(again);
          }
        }
      });
      ws.addEventListener("message", (/** @type {{data: unknown}} */ event) => {
        if (ws === this.ws) this._receive(event.data);
      });
      ws.addEventListener("close", (/** @type {{code: number, reason: string}} */ event) => {
        if (this._dropped(ws, event.code, event.reason)) {
          reject(new TaliError("disconnected", `connection closed (${event.code})`));
        }
      });
      ws.addEventListener("error", () => {}); // the close event follows and says it all
    });
  }

  /**
   * The connection `ws` is gone: fail what waits on it and reconnect unless told not
   * to. Returns false if `ws` was already given up (a later connection replaced it).
   * @param {any} ws
   * @param {number} code
   * @param {string} reason
   */
  _dropped(ws, code, reason) {
    if (ws !== this.ws) return false; // left for another node (moveTo), or given up
    this.ws = null;
    this._held = null;
    clearTimeout(this._helloDeadline);
    this._stopHeartbeat();
    for (const { reject } of this._pending.values()) reject(new TaliError("disconnected", "connection closed"));
    this._pending.clear();
    this._emit("closed", { code, reason });
    if (code === CLOSE.SESSION_REPLACED) {
      // Another tab or device resumed this session: do not fight over it.
      this._stopped = true;
      this._setStatus("replaced");
      return true;
    }
    if (this._stopped || !this.reconnect) {
      this._setStatus("closed");
      return true;
    }
    // A node we were sent to may be gone for good: start again from the address we
    // were given; a room played elsewhere sends us on.
    this.url = this.home;
    if (code === CLOSE.SERVICE_RESTART) this._attempt = 0; // expected: no backoff built up
    this._scheduleReconnect();
    return true;
  }

  /** @returns {Promise<Welcome>} */
  async _hello() {
    /** @type {Record<string, unknown>} */
    const hello = { protocol: this.protocolVersion };
    const token = await this.tokenStore.get();
    if (token) hello.token = token;
    else {
      if (this.name) hello.name = this.name;
      if (this.auth) hello.auth = typeof this.auth === "function" ? await this.auth() : this.auth;
    }
    if (this.batch) hello.capabilities = ["batch"];
    let welcome;
    try {
      welcome = await this._send("hello", hello);
    } catch (error) {
      // A 2.2 server knows no capabilities and refuses the field: say hello without it.
      if (!(error instanceof TaliError) || error.code !== "bad_message" || !hello.capabilities) throw error;
      delete hello.capabilities;
      welcome = await this._send("hello", hello);
    }
    try {
      clearTimeout(this._helloDeadline);
      this._attempt = 0;
      await this.tokenStore.set(welcome.token);
      this.playerId = welcome.player_id;
      this.name = welcome.name;
      this.welcome = welcome;
      this._offline = false;
      this._setStatus("open");
      this._startHeartbeat();
      this._emit("welcome", welcome);
    } finally {
      this._release();
    }
    return welcome;
  }

  /** The messages read since the welcome, now that the session is taken in: in order. */
  _release() {
    const held = this._held;
    this._held = null;
    for (const message of held ?? []) {
      const again = /** @type {any[] | null} */ (this._held); // set by another welcome among them
      if (again) again.push(message);
      else this._take(message);
    }
  }

  /** The delay before reconnect attempt `attempt` (1, 2, ...), in ms. */
  retryDelay(attempt = this._attempt) {
    const { initial, max, factor, jitter } = this.backoff;
    const base = Math.min(max, initial * factor ** (attempt - 1));
    return base * (1 - jitter + 2 * jitter * Math.random());
  }

  _scheduleReconnect() {
    this._attempt += 1;
    this._setStatus(this._offline ? "offline" : "reconnecting");
    clearTimeout(this._timer);
    this._timer = setTimeout(() => this._open().catch(() => {}), this.retryDelay());
  }

  _startHeartbeat() {
    this._stopHeartbeat();
    const { interval, timeout } = this.heartbeat;
    if (!interval) return;
    const ws = this.ws;
    const beat = () => {
      if (ws !== this.ws) return;
      const sent = Date.now();
      let answered = false;
      const deadline = setTimeout(() => {
        if (answered || ws !== this.ws) return;
        // The server (or the path to it) stopped answering: this connection is dead
        // even if the socket does not know it yet. Give it up and reconnect.
        this._offline = true; // said until a new connection is welcomed
        this._emit("heartbeat_lapsed", { sent, waited: Date.now() - sent });
        this._giveUp(ws, "heartbeat deadline passed");
      }, timeout);
      this._send("ping", { data: `hb-${sent}` }).then(
        () => {
          answered = true;
          clearTimeout(deadline);
          if (ws === this.ws) this._beat = setTimeout(beat, interval);
        },
        () => clearTimeout(deadline),
      );
    };
    this._beat = setTimeout(beat, interval);
  }

  /**
   * The server stopped answering on `ws` (a heartbeat or a hello past its deadline): this
   * connection is dead even if the socket does not know it yet. Close it without waiting
   * for the close to complete, and reconnect; "offline" until a new connection is welcomed.
   * @param {any} ws
   * @param {string} reason
   * @returns {boolean}  false if `ws` was already given up
   */
  _giveUp(ws, reason) {
    if (ws !== this.ws) return false;
    this._offline = true;
    try {
      ws.close(4000, reason);
    } catch {
      // already closing, or not yet open (ws in Node)
    }
    return this._dropped(ws, 4000, reason);
  }

  _stopHeartbeat() {
    clearTimeout(this._beat);
    this._beat = undefined;
  }

  /** @param {unknown} raw */
  _receive(raw) {
    /** @type {any} */
    let parsed;
    try {
      parsed = JSON.parse(String(raw));
    } catch {
      return;
    }
    // A batch: each message in order, as if it had come alone (protocol 2.3).
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    this.received.frames += 1;
    this.received.messages += messages.length;
    for (const message of messages) {
      if (this._held) this._held.push(message);
      else this._take(message);
    }
  }

  /** @param {any} message  one server message */
  _take(message) {
    if (!message || typeof message !== "object" || typeof message.type !== "string") return;
    if (message.type === "welcome") {
      this._takeWelcome(message);
      this._held = []; // until _hello has taken the session in
    }
    if (message.id !== undefined && message.id !== null && REPLIES.has(message.type)) {
      const waiting = this._pending.get(message.id);
      if (waiting) {
        this._pending.delete(message.id);
        if (message.type === "error") waiting.reject(new TaliError(message.code, message.message, message));
        else waiting.resolve(message);
      }
    }
    if (message.type === "error" && (message.id === undefined || message.id === null)) {
      this._emit("server_error", message);
    }
    if (message.type === "snapshot") {
      const last = this.lastSeq.get(message.room);
      if (last !== undefined && message.seq < last) {
        // The room's seq went back: the server lost events it had sent (protocol:
        // "If a seq ever repeats or goes backwards"). The snapshot is the truth now.
        this._emit("rewound", { room: message.room, from: last, to: message.seq });
      }
      this.lastSeq.set(message.room, message.seq);
      this.resyncing.delete(message.room);
      this._resuming.delete(message.room);
    } else if (typeof message.seq === "number" && typeof message.room === "string") {
      if (!this._inOrder(message)) return;
      this._emit("room_event", message);
    }
    // "welcome" is emitted by _hello, once the client has taken in the session.
    if (message.type !== "welcome") this._emit(message.type, message);
    this._emit("*", message);
  }

  /**
   * Seq bookkeeping for a new session or a resume, before any frame after the
   * welcome is read (the hello that awaits it resumes only later).
   * @param {Welcome} welcome
   */
  _takeWelcome(welcome) {
    const rooms = welcome.rooms ?? [];
    if (welcome.resumed) {
      // Each room of the session sends player_reconnected, then a snapshot. Events
      // missed while away show as a gap before it: the snapshot on its way covers
      // them, so no resync is asked for.
      for (const room of [...this.lastSeq.keys()]) {
        if (!rooms.includes(room)) this.lastSeq.delete(room);
      }
      this._resuming = new Set(rooms);
    } else {
      this.lastSeq.clear();
      this._resuming = new Set();
    }
    this.resyncing.clear();
    this.playerId = welcome.player_id ?? this.playerId;
  }

  /**
   * Whether a room event is the next one of its room; a gap asks for a resync.
   * @param {{room: string, seq: number, type: string, player?: string}} event
   */
  _inOrder(event) {
    const { room, seq } = event;
    if (this.resyncing.has(room)) return false; // the snapshot on its way covers it
    const last = this.lastSeq.get(room);
    if (last !== undefined && seq <= last) return false; // already reflected
    if (last !== undefined && seq > last + 1) {
      // A gap: events were missed. Ask for the whole picture again (after a resume
      // it is already on its way).
      this.resyncing.add(room);
      if (this._resuming.has(room)) return false;
      this._emit("resync", { room, from: last, to: seq });
      this.request("resync", { room }).catch(() => this.resyncing.delete(room));
      return false;
    }
    if (event.type === "player_left" && event.player === this.playerId) {
      this.lastSeq.delete(room); // nothing more comes from that room
    } else {
      this.lastSeq.set(room, seq);
    }
    return true;
  }
}
