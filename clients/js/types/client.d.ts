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
    constructor(code: string, message: string, reply?: ErrorMessage | null);
    code: string;
    reply: import("../types/messages.js").Error | null;
}
/**
 * How long a new connection may go without its `welcome`, ms (the default of
 * `helloTimeout`), counted from the moment it is made: a server that took the
 * connection and says nothing (a hung node, a proxy that accepted and stalled) is
 * given up, as a ping without its pong is, and the client reconnects with its backoff.
 */
export const HELLO_TIMEOUT: 10000;
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
    constructor(options: ClientOptions);
    url: string;
    /** The address given: reconnects go back there, not to a node we were sent to. */
    home: string;
    name: string | null;
    auth: string | (() => string | Promise<string>) | null;
    tokenStore: import("./tokens.js").TokenStore;
    protocolVersion: string;
    backoff: {
        /**
         * first delay, ms (default 500)
         */
        initial: number;
        /**
         * longest delay, ms (default 10000)
         */
        max: number;
        /**
         * growth per attempt (default 2)
         */
        factor: number;
        /**
         * plus or minus this fraction of each delay, at random (default 0.25)
         */
        jitter: number;
    };
    heartbeat: {
        /**
         * a ping this often, ms (default 15000; 0: no heartbeat)
         */
        interval: number;
        /**
         * the pong's deadline, ms (default 10000)
         */
        timeout: number;
    };
    helloTimeout: number;
    reconnect: boolean;
    batch: boolean;
    /** WebSocket frames and messages received on every connection so far. */
    received: {
        frames: number;
        messages: number;
    };
    /** Messages read after a welcome, held until the hello that awaits it has taken the
     * session in (and emitted "welcome"): a batch may carry the snapshots with it. */
    /** @type {any[] | null} */
    _held: any[] | null;
    /** @type {any} */
    _WebSocket: any;
    /** @type {any} */
    ws: any;
    /** @type {Status} */
    status: Status;
    /** @type {string | null} */
    playerId: string | null;
    /** @type {Welcome | null} */
    welcome: Welcome | null;
    /** The last seq seen per room (the rooms whose events this client tracks). */
    /** @type {Map<string, number>} */
    lastSeq: Map<string, number>;
    /** Rooms waiting for the snapshot a resync asked for: their events are dropped. */
    /** @type {Set<string>} */
    resyncing: Set<string>;
    /** Rooms of a resumed session whose snapshot has not come yet. */
    /** @type {Set<string>} */
    _resuming: Set<string>;
    _nextId: number;
    /** @type {Map<number, {resolve: (m: any) => void, reject: (e: TaliError) => void}>} */
    _pending: Map<number, {
        resolve: (m: any) => void;
        reject: (e: TaliError) => void;
    }>;
    /** @type {Map<string, Set<(message: any) => void>>} */
    _handlers: Map<string, Set<(message: any) => void>>;
    _attempt: number;
    _stopped: boolean;
    /** The server stopped answering (the heartbeat lapsed): said until it is back. */
    _offline: boolean;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    _timer: ReturnType<typeof setTimeout> | undefined;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    _beat: ReturnType<typeof setTimeout> | undefined;
    /** The current connection's deadline for its welcome. */
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    _helloDeadline: ReturnType<typeof setTimeout> | undefined;
    /**
     * Subscribe to a server message by its type ("your_turn", "snapshot", ...) or to
     * one of the client's own events ("room_event", "status", "*", ...). Returns the
     * function that unsubscribes.
     * @template {keyof EventMap} K
     * @param {K} type
     * @param {(message: EventMap[K]) => void} handler
     * @returns {() => void}
     */
    on<K extends keyof EventMap>(type: K, handler: (message: EventMap[K]) => void): () => void;
    /**
     * The next message of `type` (that `predicate` accepts), as a promise.
     * @template {keyof EventMap} K
     * @param {K} type
     * @param {(message: EventMap[K]) => boolean} [predicate]
     * @returns {Promise<EventMap[K]>}
     */
    next<K extends keyof EventMap>(type: K, predicate?: (message: EventMap[K]) => boolean): Promise<EventMap[K]>;
    /**
     * Connect and say hello, resuming the stored session if there is one (the name
     * is then used only if the server has forgotten it). Resolves with `welcome`.
     * After a takeover (status "replaced"), calling it again takes the session back.
     * @param {string | null} [name]
     * @returns {Promise<Welcome>}
     */
    connect(name?: string | null): Promise<Welcome>;
    /** Close for good: no reconnect. */
    close(): void;
    /** Close and forget the session (its token), e.g. to start again under another name. */
    forget(): Promise<void>;
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
    request<T extends ClientMessageType>(type: T, fields?: import("../types/messages.js").RequestFields<T>): Promise<ReplyMap[T]>;
    /**
     * Connect to another node of the server (`url`) and resume the session there.
     * @param {string} url
     */
    moveTo(url: string): Promise<import("../types/messages.js").Welcome>;
    /**
     * @param {string} type
     * @param {Record<string, unknown>} fields
     * @returns {Promise<any>}
     */
    _send(type: string, fields: Record<string, unknown>): Promise<any>;
    /** @param {Status} status */
    _setStatus(status: Status): void;
    /**
     * @param {string} type
     * @param {unknown} detail
     */
    _emit(type: string, detail: unknown): void;
    _socketClass(): Promise<any>;
    /** @returns {Promise<Welcome>} */
    _open(): Promise<Welcome>;
    /**
     * The connection `ws` is gone: fail what waits on it and reconnect unless told not
     * to. Returns false if `ws` was already given up (a later connection replaced it).
     * @param {any} ws
     * @param {number} code
     * @param {string} reason
     */
    _dropped(ws: any, code: number, reason: string): boolean;
    /** @returns {Promise<Welcome>} */
    _hello(): Promise<Welcome>;
    /** The messages read since the welcome, now that the session is taken in: in order. */
    _release(): void;
    /** The delay before reconnect attempt `attempt` (1, 2, ...), in ms. */
    retryDelay(attempt?: number): number;
    _scheduleReconnect(): void;
    _startHeartbeat(): void;
    /**
     * The server stopped answering on `ws` (a heartbeat or a hello past its deadline): this
     * connection is dead even if the socket does not know it yet. Close it without waiting
     * for the close to complete, and reconnect; "offline" until a new connection is welcomed.
     * @param {any} ws
     * @param {string} reason
     * @returns {boolean}  false if `ws` was already given up
     */
    _giveUp(ws: any, reason: string): boolean;
    _stopHeartbeat(): void;
    /** @param {unknown} raw */
    _receive(raw: unknown): void;
    /** @param {any} message  one server message */
    _take(message: any): void;
    /**
     * Seq bookkeeping for a new session or a resume, before any frame after the
     * welcome is read (the hello that awaits it resumes only later).
     * @param {Welcome} welcome
     */
    _takeWelcome(welcome: Welcome): void;
    /**
     * Whether a room event is the next one of its room; a gap asks for a resync.
     * @param {{room: string, seq: number, type: string, player?: string}} event
     */
    _inOrder(event: {
        room: string;
        seq: number;
        type: string;
        player?: string;
    }): boolean;
}
export type ServerMessageMap = import("../types/messages.js").ServerMessageMap;
export type ServerMessage = import("../types/messages.js").ServerMessage;
export type ClientMessageType = import("../types/messages.js").ClientMessageType;
export type ReplyMap = import("../types/messages.js").ReplyMap;
export type RoomEvent = import("../types/messages.js").RoomEvent;
export type Welcome = import("../types/messages.js").Welcome;
export type Snapshot = import("../types/messages.js").Snapshot;
export type ErrorMessage = import("../types/messages.js").Error;
export type TokenStore = import("./tokens.js").TokenStore;
export type Status = "idle" | "connecting" | "open" | "reconnecting" | "offline" | "replaced" | "closed";
/**
 * what `on` delivers besides the server's messages
 */
export type ClientEvents = {
    /**
     * the connection's state changed
     */
    status: {
        status: Status;
        attempt: number;
    };
    /**
     * a room event that passed the seq check, in seq order
     */
    room_event: RoomEvent;
    /**
     * a gap in seq: a resync was sent
     */
    resync: {
        room: string;
        from: number;
        to: number;
    };
    /**
     * the WebSocket closed
     */
    closed: {
        code: number;
        reason: string;
    };
    /**
     * the server forgot the session: a new one was started
     */
    session_lost: TaliError;
    /**
     * an error that answers no request
     */
    server_error: ErrorMessage;
    /**
     * no pong within the deadline: status
     * "offline" until a new connection is welcomed
     */
    heartbeat_lapsed: {
        sent: number;
        waited: number;
    };
    /**
     * a snapshot below the last seq
     * seen in its room: the server lost events it had sent (the snapshot is the truth now)
     */
    rewound: {
        room: string;
        from: number;
        to: number;
    };
    /**
     * a frame this client sent
     */
    sent: Record<string, unknown>;
    /**
     * the session is open (after a resume too)
     */
    welcome: Welcome;
};
/**
 * `"*"`: every server message, known or not
 */
export type EventMap = ServerMessageMap & ClientEvents & {
    "*": ServerMessage;
};
export type Backoff = {
    /**
     * first delay, ms (default 500)
     */
    initial?: number | undefined;
    /**
     * longest delay, ms (default 10000)
     */
    max?: number | undefined;
    /**
     * growth per attempt (default 2)
     */
    factor?: number | undefined;
    /**
     * plus or minus this fraction of each delay, at random (default 0.25)
     */
    jitter?: number | undefined;
};
export type Heartbeat = {
    /**
     * a ping this often, ms (default 15000; 0: no heartbeat)
     */
    interval?: number | undefined;
    /**
     * the pong's deadline, ms (default 10000)
     */
    timeout?: number | undefined;
};
export type ClientOptions = {
    /**
     * e.g. "ws://localhost:8765/"
     */
    url: string;
    /**
     * the name to ask for in hello
     */
    name?: string | null | undefined;
    /**
     * a sign-in token from
     * the operator's site (protocol 2.2), or a function that fetches a fresh one: used for each
     * new session (a token is good for one hello), never when a session is resumed
     */
    auth?: string | (() => string | Promise<string>) | null | undefined;
    /**
     * where the session token is kept (default: localStorage
     * in a browser, memory elsewhere)
     */
    tokenStore?: import("./tokens.js").TokenStore | undefined;
    /**
     * a WebSocket class (default: the platform's, else `ws`)
     */
    WebSocket?: any;
    backoff?: Backoff | undefined;
    heartbeat?: Heartbeat | undefined;
    /**
     * a new connection's deadline for its welcome, ms (default
     * HELLO_TIMEOUT, 10000; 0: none): past it the connection is given up, status "offline", and
     * the client reconnects with its backoff
     */
    helloTimeout?: number | undefined;
    /**
     * reconnect and resume after a drop (default true)
     */
    reconnect?: boolean | undefined;
    /**
     * the version sent in hello (default this library's)
     */
    protocol?: string | undefined;
    /**
     * ask for the `batch` capability (protocol 2.3, default false): the
     * server may then send several messages in one frame, a JSON array; they are delivered one
     * by one, in order, exactly as if each had come alone (a 2.2 server that refuses the
     * capability is asked again without it)
     */
    batch?: boolean | undefined;
};
