/** @typedef {import("../types/messages.js").YourTurn} YourTurn */
/** @typedef {import("../types/messages.js").ActionKind} ActionKind */
/**
 * @typedef {object} Option  one action on offer
 * @property {ActionKind} action
 * @property {string} text  what it does, in words
 * @property {number | null} min  the smallest amount (`bet` amount, `raise` to), or null
 * @property {number | null} max  the largest, or null
 * @property {number | null} chips  the chips it puts in, when the offer says (call, ante,
 *   reroll, all in: the round total), or null
 * @property {Record<string, unknown>} message  a message that takes it (at `min`, die 0)
 *
 * @typedef {object} Verdict
 * @property {boolean} ok
 * @property {string | null} code  the error the server would answer, or null
 * @property {string} reason
 */
/**
 * Read a `your_turn` offer.
 * @param {YourTurn} turn
 */
export function legal(turn: YourTurn): {
    room: string;
    hand: number;
    phase: import("../types/messages.js").Phase;
    options: Option[];
    /** @param {string} action */
    can: (action: string) => boolean;
    /** @param {string} action */
    option: (action: string) => Option | null;
    /** The offer in a few lines of text. */
    explain(): string;
    /**
     * Whether `message` is within the offer; if not, the error the server answers.
     * @param {{type: string, amount?: number, to?: number, die?: number}} message
     * @returns {Verdict}
     */
    check(message: {
        type: string;
        amount?: number;
        to?: number;
        die?: number;
    }): Verdict;
};
export type YourTurn = import("../types/messages.js").YourTurn;
export type ActionKind = import("../types/messages.js").ActionKind;
/**
 * one action on offer
 */
export type Option = {
    action: ActionKind;
    /**
     * what it does, in words
     */
    text: string;
    /**
     * the smallest amount (`bet` amount, `raise` to), or null
     */
    min: number | null;
    /**
     * the largest, or null
     */
    max: number | null;
    /**
     * the chips it puts in, when the offer says (call, ante,
     * reroll, all in: the round total), or null
     */
    chips: number | null;
    /**
     * a message that takes it (at `min`, die 0)
     */
    message: Record<string, unknown>;
};
export type Verdict = {
    ok: boolean;
    /**
     * the error the server would answer, or null
     */
    code: string | null;
    reason: string;
};
