/**
 * Every roll each player made in the hand, as seen in `events` (the hand's
 * events in order, from hand_started). `sent` maps the seq of our own
 * dice_rolled or rerolled to the entropy we sent with that action.
 * @param {any[]} events
 * @param {string} you
 * @param {Record<number, string>} [sent]
 */
export function rollsSeen(events: any[], you: string, sent?: Record<number, string>): Map<string, {
    faces: number[] | null;
    entropy: string | null;
}[]>;
/**
 * Check a finished hand. `events` runs from its hand_started to its hand_ended;
 * `opening` is our own opening when it came apart (dice_opened), or null.
 * `sent` maps the seq of each of our rolls to the entropy we sent with it;
 * with `sentKnown` false (a hand this browser did not play: another device),
 * our own rolls are checked with the entropy the opening names, like anyone's.
 * A bot's opening (entropy_from set) must list players dealt in, in turn order,
 * no bot among them, us included when we are not a bot; the entropy it lists
 * for us (and for anyone whose opening we hold) must be the one their first
 * roll used, and the bot's dice must follow from it (FAIRNESS.md §5). Each
 * person checks their own entry: that is what a bot's dice owe them.
 * Returns { status, problems, checked, mixed } where `mixed` says that our own
 * dice were checked with entropy we sent, and status is
 *   "verified"   every opening we hold opens its commitment and gives the dice we saw;
 *   "failed"     at least one did not (problems say whose and how);
 *   "waiting"    our own opening has not come yet (dice_opened follows hand_ended);
 *   "unchecked"  nothing to check (no dice were shown to us), or we missed the hand's start.
 *
 * @param {object} hand
 * @param {string} hand.room
 * @param {number} hand.hand
 * @param {string} hand.you  our player id
 * @param {any[]} hand.events
 * @param {import("../types/messages.js").DiceOpening | null} [hand.opening]
 * @param {Record<number, string>} [hand.sent]
 * @param {boolean} [hand.sentKnown]
 * @returns {Promise<{status: "verified" | "failed" | "waiting" | "unchecked", problems: {player: string | null, text: string}[], checked: number, mixed?: boolean, reason?: string}>}
 */
export function checkHand({ room, hand, you, events, opening, sent, sentKnown }: {
    room: string;
    hand: number;
    you: string;
    events: any[];
    opening?: import("../types/messages.js").DiceOpening | null | undefined;
    sent?: Record<number, string> | undefined;
    sentKnown?: boolean | undefined;
}): Promise<{
    status: "verified" | "failed" | "waiting" | "unchecked";
    problems: {
        player: string | null;
        text: string;
    }[];
    checked: number;
    mixed?: boolean;
    reason?: string;
}>;
/**
 * @typedef {object} FairVerdict
 * @property {string} room
 * @property {number} hand
 * @property {"verified" | "failed" | "unchecked"} status
 * @property {{player: string | null, text: string}[]} problems
 */
/**
 * Checks every hand a client plays or watches, as it ends: it keeps each hand's
 * events as they arrive, the entropy the client sent with its own rolls, and our
 * own opening when it comes apart (`dice_opened`), and calls `onVerdict` once per
 * hand. Usage: `new FairDiceChecker(client, (verdict) => ...)`.
 */
export class FairDiceChecker {
    /**
     * @param {{on: (type: any, handler: (message: any) => void) => () => void, playerId: string | null}} client
     *   a TaliClient
     * @param {(verdict: FairVerdict) => void} onVerdict
     */
    constructor(client: {
        on: (type: any, handler: (message: any) => void) => () => void;
        playerId: string | null;
    }, onVerdict: (verdict: FairVerdict) => void);
    client: {
        on: (type: any, handler: (message: any) => void) => () => void;
        playerId: string | null;
    };
    onVerdict: (verdict: FairVerdict) => void;
    /** @type {Map<string, {hand: number, events: any[], sent: Record<number, string>}>} */
    hands: Map<string, {
        hand: number;
        events: any[];
        sent: Record<number, string>;
    }>;
    /** @type {Map<string, string>} the entropy of our roll in flight, by room */
    pending: Map<string, string>;
    /** @type {Map<string, {room: string, hand: number, events: any[], sent: Record<number, string>}>} */
    waiting: Map<string, {
        room: string;
        hand: number;
        events: any[];
        sent: Record<number, string>;
    }>;
    off: (() => void)[];
    /** Stop listening. */
    close(): void;
    /** @param {any} message */
    _sent(message: any): void;
    /** @param {any} event */
    _event(event: any): void;
    /** @param {import("../types/messages.js").DiceOpened} message */
    _opened(message: import("../types/messages.js").DiceOpened): void;
    /**
     * @param {{room: string, hand: number, events: any[], sent: Record<number, string>}} held
     * @param {import("../types/messages.js").DiceOpening | null} opening
     */
    _check(held: {
        room: string;
        hand: number;
        events: any[];
        sent: Record<number, string>;
    }, opening: import("../types/messages.js").DiceOpening | null): Promise<void>;
}
export type FairVerdict = {
    room: string;
    hand: number;
    status: "verified" | "failed" | "unchecked";
    problems: {
        player: string | null;
        text: string;
    }[];
};
