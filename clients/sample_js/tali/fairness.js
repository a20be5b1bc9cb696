// A copy of clients/js/src/fairness.js, made by `python -m server.devtools.client_facts`: edit the original.
// Checking the server's dice: the verifier of the provably fair scheme
// (protocol/FAIRNESS.md), with Web Crypto only. No dependencies; it runs in the
// browser and in Node 20+ (globalThis.crypto.subtle). The Python verifier,
// protocol/fairness.py, gives the same answers on protocol/fairness-vectors.json.
//
//   import { verify, verifyBot, newEntropy } from "./fairness.js";
//   const entropy = newEntropy();                 // send it with roll / reroll
//   const ok = await verify({ commitment, secret, room, hand, player,
//                             rolls: [{ faces: [6, 4, 3, 3], entropy }] });
//   // A bot's opening (entropy_from set): its dice take the people's entropy.
//   const botOk = await verifyBot({ commitment, secret, room, hand, player,
//                                   rolls: [[1, 4, 6, 6]], entropyFrom: opening.entropy_from });

export const SCHEME = "tali-fair-v1";
export const SECRET_BYTES = 32;
export const ACCEPT_BELOW = 252; // 252 = 6 x 42: bytes 252..255 are skipped

const COMMIT_DOMAIN = new TextEncoder().encode("tali-fair-v1/commit\0");
const DICE_DOMAIN = new TextEncoder().encode("tali-fair-v1/dice\0");
const TABLE_DOMAIN = new TextEncoder().encode("tali-fair-v1/table\0");
const MAX_SOURCES = 255;
const MAX_INDEX = 2 ** 32 - 1;
const ENTROPY = /^[A-Za-z0-9_-]{1,64}$/;
const HEX_SECRET = /^[0-9a-fA-F]{64}$/;

const subtle = () => {
  const api = globalThis.crypto?.subtle;
  if (!api) throw new Error("Web Crypto (crypto.subtle) is not available here");
  return api;
};

/** 1..64 characters of A-Z a-z 0-9 _ - */
export function validEntropy(entropy) {
  return typeof entropy === "string" && ENTROPY.test(entropy);
}

/** Fresh entropy for a roll: 16 random bytes as 22 characters of base64url. */
export function newEntropy() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The 32 secret bytes, from 64 hex digits (as the opening travels) or from bytes. */
export function secretBytes(secret) {
  if (typeof secret === "string") {
    if (!HEX_SECRET.test(secret)) throw new RangeError("a secret is 64 hex digits");
    return Uint8Array.from(/** @type {RegExpMatchArray} */ (secret.match(/../g)), (pair) => parseInt(pair, 16));
  }
  if (secret instanceof Uint8Array && secret.length === SECRET_BYTES) return secret;
  throw new RangeError(`a secret is ${SECRET_BYTES} bytes`);
}

/** SHA-256 of the commitment domain and the secret, as 64 lowercase hex digits. */
export async function commitment(secret) {
  const key = secretBytes(secret);
  const data = new Uint8Array(COMMIT_DOMAIN.length + key.length);
  data.set(COMMIT_DOMAIN);
  data.set(key, COMMIT_DOMAIN.length);
  return toHex(new Uint8Array(await subtle().digest("SHA-256", data)));
}

function shortString(value, what) {
  const data = typeof value === "string" ? new TextEncoder().encode(value) : null;
  // A lone surrogate cannot be encoded: TextEncoder would replace it silently.
  if (!data || new TextDecoder().decode(data) !== value || data.length < 1 || data.length > 255) {
    throw new RangeError(`${what} is 1..255 bytes of UTF-8`);
  }
  return [data.length, ...data];
}

function uint32(n) {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

function entropyField(entropy) {
  if (entropy === null || entropy === undefined) return [0];
  if (validEntropy(entropy)) return [entropy.length, ...new TextEncoder().encode(entropy)];
  throw new RangeError("entropy is 1..64 characters of A-Z a-z 0-9 _ -");
}

function handNumber(hand) {
  if (!Number.isSafeInteger(hand) || hand < 1) throw new RangeError("a hand number is 1..2**53-1");
  return [...uint32(Math.floor(hand / 2 ** 32)), ...uint32(hand % 2 ** 32)];
}

/** The HMAC message for one block of one roll (FAIRNESS.md, "The derivation"). */
export function diceMessage(room, hand, player, firstIndex, entropy, block) {
  const handField = handNumber(hand);
  if (!Number.isInteger(firstIndex) || firstIndex < 0 || firstIndex > MAX_INDEX) {
    throw new RangeError("a die index is 0..2**32-1");
  }
  if (!Number.isInteger(block) || block < 0 || block > MAX_INDEX) {
    throw new RangeError("a block counter is 0..2**32-1");
  }
  return Uint8Array.from([
    ...DICE_DOMAIN,
    ...shortString(room, "a room id"),
    ...handField,
    ...shortString(player, "a player id"),
    ...uint32(firstIndex),
    ...entropyField(entropy),
    ...uint32(block),
  ]);
}

/**
 * What the table entropy hashes (FAIRNESS.md §5): the domain, the room, the hand,
 * the number of people and each person's id and the entropy of their first roll.
 * `sources` is a bot opening's entropy_from: [{player, entropy}], in turn order.
 */
export function tableMessage(room, hand, sources) {
  if (!Array.isArray(sources) || sources.length > MAX_SOURCES) {
    throw new RangeError(`at most ${MAX_SOURCES} people contribute to the table entropy`);
  }
  const bytes = [...TABLE_DOMAIN, ...shortString(room, "a room id"), ...handNumber(hand), sources.length];
  for (const source of sources) {
    bytes.push(...shortString(source.player, "a player id"), ...entropyField(source.entropy ?? null));
  }
  return Uint8Array.from(bytes);
}

/** The entropy of every roll of a bot in the hand: SHA-256 of tableMessage, base64url. */
export async function tableEntropy(room, hand, sources) {
  const digest = new Uint8Array(await subtle().digest("SHA-256", tableMessage(room, hand, sources)));
  let text = "";
  for (const b of digest) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The first `count` faces of a byte stream given block by block: a byte below
 * 252 gives `byte % 6 + 1`, any other is skipped. `nextBlock(i)` returns (or
 * resolves to) block i, from 0.
 */
export async function facesFromBlocks(nextBlock, count) {
  const faces = [];
  for (let i = 0; faces.length < count; i++) {
    const block = await nextBlock(i);
    if (!block) throw new RangeError("the byte stream ended before the roll was complete");
    for (const byte of block) {
      if (byte < ACCEPT_BELOW) {
        faces.push((byte % 6) + 1);
        if (faces.length === count) break;
      }
    }
  }
  return faces;
}

function importKey(secret) {
  return subtle().importKey("raw", /** @type {Uint8Array<ArrayBuffer>} */ (secretBytes(secret)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

async function rollWithKey(key, room, hand, player, firstIndex, count, entropy) {
  if (!Number.isInteger(count) || count < 1 || firstIndex + count > MAX_INDEX + 1) {
    throw new RangeError("a roll has at least one die, and its indices fit in 32 bits");
  }
  diceMessage(room, hand, player, firstIndex, entropy, 0); // checks every field first
  const block = async (i) => {
    const message = diceMessage(room, hand, player, firstIndex, entropy, i);
    return new Uint8Array(await subtle().sign("HMAC", key, message));
  };
  return facesFromBlocks(block, count);
}

/**
 * The faces of one roll of `count` dice whose first die has index `firstIndex`;
 * `entropy` is the entropy the roll uses (see effectiveEntropies), or null.
 */
export async function rollFaces(secret, room, hand, player, firstIndex, count, entropy = null) {
  return rollWithKey(await importKey(secret), room, hand, player, firstIndex, count, entropy);
}

/** The entropy each roll uses: its own, else the player's latest earlier one in the hand. */
export function effectiveEntropies(supplied) {
  let latest = null;
  return supplied.map((entropy) => {
    if (entropy !== null && entropy !== undefined) latest = entropy;
    return latest;
  });
}

/**
 * A player's dice in a hand: `rolls` is every roll in order, `{count, entropy}`
 * with the entropy supplied with it (or null); returns each roll's faces. The
 * die index runs on across the rolls: the first roll's dice are 0..count-1.
 */
export async function deriveDice(secret, room, hand, player, rolls) {
  const key = await importKey(secret);
  const entropies = effectiveEntropies(rolls.map((roll) => roll.entropy ?? null));
  const out = [];
  let index = 0;
  for (let i = 0; i < rolls.length; i++) {
    out.push(await rollWithKey(key, room, hand, player, index, rolls[i].count, entropies[i]));
    index += rolls[i].count;
  }
  return out;
}

/**
 * Whether `secret` opens `commitment` and gives exactly `rolls` (every roll of
 * the player's in the hand, in order, each `{faces, entropy}` with the entropy
 * supplied with it, or null). Anything malformed does not verify.
 */
export async function verify({ commitment: committed, secret, room, hand, player, rolls }) {
  try {
    if (typeof committed !== "string" || (await commitment(secret)) !== committed.toLowerCase()) return false;
    if (!rolls.every((r) => Array.isArray(r.faces) && r.faces.length > 0 && r.faces.every(Number.isInteger))) {
      return false;
    }
    const derived = await deriveDice(
      secret, room, hand, player,
      rolls.map((r) => ({ count: r.faces.length, entropy: r.entropy ?? null })),
    );
    return derived.every((faces, i) => faces.every((face, j) => face === rolls[i].faces[j]));
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) return false;
    throw error;
  }
}

/**
 * Whether a bot's `secret` opens `commitment` and gives exactly `rolls` (each roll's
 * faces, in order), every roll with the table entropy made of `entropyFrom` (the
 * opening's entropy_from). Check besides (sourcesProblem) that entropyFrom names
 * the people dealt in, in turn order, and gives you the entropy your first roll used.
 */
export async function verifyBot({ commitment: committed, secret, room, hand, player, rolls, entropyFrom }) {
  try {
    const players = entropyFrom.map((s) => s.player);
    if (new Set(players).size !== players.length || players.includes(player)) return false;
    const entropy = await tableEntropy(room, hand, entropyFrom);
    return await verify({
      commitment: committed, secret, room, hand, player,
      rolls: rolls.map((faces) => ({ faces, entropy })),
    });
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) return false;
    throw error;
  }
}

/**
 * What is wrong with a bot opening's entropy_from, or null: it must list `people`
 * (the players dealt in who are not bots, in turn order) and give each player in
 * `known` (a Map: yours, the entropy your first roll used; others' from their
 * openings) exactly that entropy.
 */
export function sourcesProblem(entropyFrom, people, known) {
  const listed = entropyFrom.map((s) => s.player);
  if (listed.length !== people.length || listed.some((p, i) => p !== people[i])) {
    return `it lists ${listed.join(", ") || "nobody"}, not the people dealt in (${people.join(", ") || "none"})`;
  }
  for (const source of entropyFrom) {
    if (known.has(source.player) && (source.entropy ?? null) !== (known.get(source.player) ?? null)) {
      return `it gives ${source.player} another entropy than their first roll used`;
    }
  }
  return null;
}
