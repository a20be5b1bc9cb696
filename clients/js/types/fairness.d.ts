/** 1..64 characters of A-Z a-z 0-9 _ - */
export function validEntropy(entropy: any): boolean;
/** Fresh entropy for a roll: 16 random bytes as 22 characters of base64url. */
export function newEntropy(): string;
export function toHex(bytes: any): string;
/** The 32 secret bytes, from 64 hex digits (as the opening travels) or from bytes. */
export function secretBytes(secret: any): Uint8Array<ArrayBufferLike>;
/** SHA-256 of the commitment domain and the secret, as 64 lowercase hex digits. */
export function commitment(secret: any): Promise<string>;
/** The HMAC message for one block of one roll (FAIRNESS.md, "The derivation"). */
export function diceMessage(room: any, hand: any, player: any, firstIndex: any, entropy: any, block: any): Uint8Array<ArrayBuffer>;
/**
 * What the table entropy hashes (FAIRNESS.md §5): the domain, the room, the hand,
 * the number of people and each person's id and the entropy of their first roll.
 * `sources` is a bot opening's entropy_from: [{player, entropy}], in turn order.
 */
export function tableMessage(room: any, hand: any, sources: any): Uint8Array<ArrayBuffer>;
/** The entropy of every roll of a bot in the hand: SHA-256 of tableMessage, base64url. */
export function tableEntropy(room: any, hand: any, sources: any): Promise<string>;
/**
 * The first `count` faces of a byte stream given block by block: a byte below
 * 252 gives `byte % 6 + 1`, any other is skipped. `nextBlock(i)` returns (or
 * resolves to) block i, from 0.
 */
export function facesFromBlocks(nextBlock: any, count: any): Promise<number[]>;
/**
 * The faces of one roll of `count` dice whose first die has index `firstIndex`;
 * `entropy` is the entropy the roll uses (see effectiveEntropies), or null.
 */
export function rollFaces(secret: any, room: any, hand: any, player: any, firstIndex: any, count: any, entropy?: null): Promise<number[]>;
/** The entropy each roll uses: its own, else the player's latest earlier one in the hand. */
export function effectiveEntropies(supplied: any): any;
/**
 * A player's dice in a hand: `rolls` is every roll in order, `{count, entropy}`
 * with the entropy supplied with it (or null); returns each roll's faces. The
 * die index runs on across the rolls: the first roll's dice are 0..count-1.
 */
export function deriveDice(secret: any, room: any, hand: any, player: any, rolls: any): Promise<number[][]>;
/**
 * Whether `secret` opens `commitment` and gives exactly `rolls` (every roll of
 * the player's in the hand, in order, each `{faces, entropy}` with the entropy
 * supplied with it, or null). Anything malformed does not verify.
 */
export function verify({ commitment: committed, secret, room, hand, player, rolls }: {
    commitment: any;
    secret: any;
    room: any;
    hand: any;
    player: any;
    rolls: any;
}): Promise<boolean>;
/**
 * Whether a bot's `secret` opens `commitment` and gives exactly `rolls` (each roll's
 * faces, in order), every roll with the table entropy made of `entropyFrom` (the
 * opening's entropy_from). Check besides (sourcesProblem) that entropyFrom names
 * the people dealt in, in turn order, and gives you the entropy your first roll used.
 */
export function verifyBot({ commitment: committed, secret, room, hand, player, rolls, entropyFrom }: {
    commitment: any;
    secret: any;
    room: any;
    hand: any;
    player: any;
    rolls: any;
    entropyFrom: any;
}): Promise<boolean>;
/**
 * What is wrong with a bot opening's entropy_from, or null: it must list `people`
 * (the players dealt in who are not bots, in turn order) and give each player in
 * `known` (a Map: yours, the entropy your first roll used; others' from their
 * openings) exactly that entropy.
 */
export function sourcesProblem(entropyFrom: any, people: any, known: any): string | null;
export const SCHEME: "tali-fair-v1";
export const SECRET_BYTES: 32;
export const ACCEPT_BELOW: 252;
