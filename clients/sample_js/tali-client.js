// The tali protocol client: a module a third-party client can lift as it is.
// No dependencies but facts.js (generated). It speaks the protocol of facts.js (2.2) over one WebSocket (see protocol/README.md):
// hello and resume, requests with ids answered by promises, events by type,
// automatic reconnect with backoff that resumes the session with its token,
// and seq-gap detection per room that asks for a fresh snapshot.

import { CLOSE, PROTOCOL_VERSION } from "./facts.js";

export const PROTOCOL = PROTOCOL_VERSION;

/** A refused request: `code` is the protocol's stable error code. */
export class TaliError extends Error {
  constructor(code, message, reply = null) {
    super(message);
    this.code = code;
    this.reply = reply;
  }
}

const DIRECT_REPLIES = new Set(["welcome", "result", "error", "room_list", "pong", "hand_history"]);

export class TaliClient extends EventTarget {
  /**
   * @param {object} options
   * @param {string} options.url  e.g. "ws://localhost:8765/"
   * @param {Storage} [options.storage]  where the session token is kept (default: localStorage,
   *   shared by a browser's tabs and kept across restarts, so a closed tab resumes its seat)
   */
  constructor({ url, storage = globalThis.localStorage }) {
    super();
    this.url = url;
    this.home = url; // the address given: a proxy or any node, which reaches whichever node is up
    this.storage = storage;
    this.ws = null;
    this.name = null;
    this.playerId = null;
    this.protocol = null; // the version the server speaks, from welcome
    this.status = "idle";
    this.lastSeq = new Map(); // room id -> last seq seen
    this._nextId = 1;
    this._pending = new Map(); // request id -> {resolve, reject}
    this._attempt = 0;
    this._stopped = false;
    this._timer = null;
  }

  get token() {
    return this.storage?.getItem("tali.token") ?? null;
  }

  set token(value) {
    if (value) this.storage?.setItem("tali.token", value);
    else this.storage?.removeItem("tali.token");
  }

  /** Subscribe to a message type ("your_turn", "chat", ...), or "*" for every message. */
  on(type, handler) {
    const listener = (event) => handler(event.detail);
    this.addEventListener(type, listener);
    return () => this.removeEventListener(type, listener);
  }

  /**
   * Connect and say hello (resuming the stored session if there is one; the name
   * is then used only if the server has forgotten it). Resolves with `welcome`.
   * After a takeover (status "replaced"), calling it again takes the session back.
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
    this.ws?.close(1000, "bye");
  }

  /** Close and forget the session (its token), e.g. to start again under another name. */
  forget() {
    this.close();
    this.token = null;
    this.playerId = null;
    this.lastSeq.clear();
  }

  /**
   * Send a request; resolves with the direct reply, rejects with TaliError. A
   * room played at another node of the server (`room_elsewhere`) is followed
   * there: connect to the error's `url`, resume, and send the request again, once.
   */
  async request(type, fields = {}) {
    try {
      return await this._send(type, fields);
    } catch (error) {
      const url = error.reply?.url;
      if (error.code !== "room_elsewhere" || !url || type === "hello") throw error;
      await this.moveTo(url);
      return this._send(type, fields);
    }
  }

  /** Connect to another node of the server (`url`) and resume the session there. */
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

  _send(type, fields) {
    const id = this._nextId++;
    const message = { type, id, ...fields };
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new TaliError("disconnected", "not connected"));
        return;
      }
      this._pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify(message));
    });
  }

  _setStatus(status) {
    this.status = status;
    this._emit("status", { status, attempt: this._attempt });
  }

  _emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  _open() {
    this._setStatus(this._attempt ? "reconnecting" : "connecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", async () => {
        try {
          resolve(await this._hello());
        } catch (error) {
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
          this.token = null;
          this.lastSeq.clear();
          this._emit("session_lost", error);
          try {
            resolve(await this._hello());
          } catch (again) {
            reject(again);
          }
        }
      });
      ws.addEventListener("message", (event) => {
        if (ws === this.ws) this._receive(event.data);
      });
      ws.addEventListener("close", (event) => {
        if (ws !== this.ws) return; // left for another node (moveTo)
        for (const { reject: fail } of this._pending.values()) fail(new TaliError("disconnected", "connection closed"));
        this._pending.clear();
        this._emit("closed", { code: event.code, reason: event.reason });
        if (event.code === CLOSE.SESSION_REPLACED) {
          // Another tab or device resumed this session: do not fight over it.
          this._stopped = true;
          this._setStatus("replaced");
          return;
        }
        if (this._stopped) {
          this._setStatus("closed");
          return;
        }
        // A node we were sent to may be gone for good (its rooms moved: 1012, or it died):
        // start again from the address we were given; a room played elsewhere sends us on.
        this.url = this.home;
        if (event.code === CLOSE.SERVICE_RESTART) this._attempt = 0; // expected: no backoff built up
        this._scheduleReconnect();
        reject(new TaliError("disconnected", `connection closed (${event.code})`));
      });
    });
  }

  /** Say hello, resuming with the stored token if there is one. */
  async _hello() {
    const hello = { protocol: PROTOCOL };
    if (this.token) hello.token = this.token;
    else if (this.name) hello.name = this.name;
    const welcome = await this.request("hello", hello);
    this._attempt = 0;
    this.token = welcome.token;
    this.playerId = welcome.player_id;
    this.name = welcome.name;
    this.protocol = welcome.protocol;
    this._setStatus("open");
    this._emit("welcome", welcome);
    return welcome;
  }

  _scheduleReconnect() {
    this._attempt += 1;
    const delay = Math.min(10000, 500 * 2 ** (this._attempt - 1)) * (0.75 + Math.random() / 2);
    this._setStatus("reconnecting");
    clearTimeout(this._timer);
    this._timer = setTimeout(() => this._open().catch(() => {}), delay);
  }

  _receive(raw) {
    let message;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (message.id !== undefined && message.id !== null && DIRECT_REPLIES.has(message.type)) {
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
      this.lastSeq.set(message.room, message.seq);
    } else if (typeof message.seq === "number" && message.room) {
      const last = this.lastSeq.get(message.room);
      if (last !== undefined && message.seq <= last) return; // already reflected
      if (last !== undefined && message.seq > last + 1) {
        // A gap: events were missed. Ask for the whole picture again.
        this.lastSeq.delete(message.room);
        this.request("resync", { room: message.room }).catch(() => {});
        return;
      }
      this.lastSeq.set(message.room, message.seq);
      this._emit("room_event", message);
    }
    // "welcome" is emitted by _hello, once the client has taken in the session.
    if (message.type !== "welcome") this._emit(message.type, message);
    this._emit("*", message);
  }
}
