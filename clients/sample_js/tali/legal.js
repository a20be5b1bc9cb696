// A copy of clients/js/src/legal.js, made by `python -m server.devtools.client_facts`: edit the original.
// What a `your_turn` offers, in words and as messages ready to send, and whether
// a message you mean to send is within the offer (protocol/messages.md, `your_turn`;
// rules §4.2 for the betting). The server decides what is legal and sends it;
// this only reads the offer, so it never disagrees with the server.

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
export function legal(turn) {
  const offer = turn.legal;
  const has = (/** @type {string} */ kind) => offer.actions.includes(/** @type {ActionKind} */ (kind));
  const facing = (offer.call_amount ?? 0) > 0;
  /** @type {Option[]} */
  const options = [];
  const add = (
    /** @type {ActionKind} */ action,
    /** @type {string} */ text,
    /** @type {Record<string, unknown>} */ fields = {},
    /** @type {number | null} */ min = null,
    /** @type {number | null} */ max = null,
    /** @type {number | null} */ chips = null,
  ) => options.push({ action, text, min, max, chips, message: { type: action, room: turn.room, ...fields } });

  for (const action of offer.actions) {
    switch (action) {
      case "roll":
        add(action, "roll the dice you owe (four at the start of a hand, one on a stud street)");
        break;
      case "check":
        add(action, "check: stay in without betting (nothing to call)");
        break;
      case "bet":
        add(action, amountText("bet", offer.bet_min, offer.bet_max, offer.all_in_total), { amount: offer.bet_min },
          offer.bet_min ?? null, offer.bet_max ?? null);
        break;
      case "call":
        add(action, `call: add ${offer.call_amount} chips to match the bet`, {}, null, null, offer.call_amount ?? 0);
        break;
      case "raise":
        add(action, amountText("raise to", offer.raise_min, offer.raise_max, offer.all_in_total),
          { to: offer.raise_min }, offer.raise_min ?? null, offer.raise_max ?? null);
        break;
      case "all_in":
        add(action, allInText(offer, facing, has), {}, null, null, offer.all_in_total ?? null);
        break;
      case "fold":
        add(action, "fold: give up the hand (your dice are never shown)");
        break;
      case "reroll":
        add(action, `reroll one of your dice (die 0..3) for ${offer.reroll_cost} chips`, { die: 0 },
          null, null, offer.reroll_cost ?? null);
        break;
      case "pass":
        add(action, "pass: keep your dice this draw round");
        break;
      case "ante":
        add(action, `pay the street's ante: ${offer.ante_amount} chips`, {}, null, null, offer.ante_amount ?? null);
        break;
      default:
        add(action, `${action} (an action this library does not know)`);
    }
  }
  return {
    room: turn.room,
    hand: turn.hand,
    phase: turn.phase,
    options,
    /** @param {string} action */
    can: (action) => has(action),
    /** @param {string} action */
    option: (action) => options.find((o) => o.action === action) ?? null,
    /** The offer in a few lines of text. */
    explain() {
      const lines = options.map((o) => `- ${o.text}`);
      const note = closedRaiseNote(offer, facing, has);
      if (note) lines.push(note);
      return `Your turn (hand ${turn.hand}, ${turn.phase}):\n${lines.join("\n")}`;
    },
    /**
     * Whether `message` is within the offer; if not, the error the server answers.
     * @param {{type: string, amount?: number, to?: number, die?: number}} message
     * @returns {Verdict}
     */
    check(message) {
      if (!has(message.type)) {
        return { ok: false, code: "illegal_action", reason: `${message.type} is not offered now` };
      }
      if (message.type === "bet") return within(message.amount, offer.bet_min, offer.bet_max, offer.all_in_total);
      if (message.type === "raise") return within(message.to, offer.raise_min, offer.raise_max, offer.all_in_total);
      const die = message.die ?? -1;
      if (message.type === "reroll" && !(Number.isInteger(die) && die >= 0 && die <= 3)) {
        return { ok: false, code: "bad_message", reason: "die is 0..3" };
      }
      return { ok: true, code: null, reason: "" };
    },
  };
}

/**
 * @param {string} verb
 * @param {number | null | undefined} min
 * @param {number | null | undefined} max
 * @param {number | null | undefined} allIn
 */
function amountText(verb, min, max, allIn) {
  const range = min === max ? `${verb} exactly ${min} (fixed limit)` : `${verb} ${min} to ${max}`;
  let cap = "";
  if (min !== max && given(allIn) && given(max) && max < allIn) cap = ", capped below your stack (pot limit)";
  else if (min !== max && given(allIn) && max === allIn) cap = ", up to your whole stack";
  return `${range} (your total for the round${cap})`;
}

/**
 * @param {import("../types/messages.js").LegalActions} offer
 * @param {boolean} facing
 * @param {(kind: string) => boolean} has
 */
function allInText(offer, facing, has) {
  const total = offer.all_in_total;
  if (!facing) {
    if (has("bet") && given(offer.bet_min) && given(total) && total >= offer.bet_min) {
      return `all in: bet your whole stack (round total ${total})`;
    }
    return `all in: a bet of ${total}, less than the minimum bet (table stakes)`;
  }
  if (!has("raise")) return `all in: a call with your whole stack (round total ${total})`;
  if (given(offer.raise_min) && given(total) && total < offer.raise_min) {
    return `all in: a raise to ${total}, short of a full raise: it does not reopen the betting for players who already acted`;
  }
  return `all in: raise to ${total} with your whole stack`;
}

/**
 * Why a player facing a bet may not raise, when they may not.
 * @param {import("../types/messages.js").LegalActions} offer
 * @param {boolean} facing
 * @param {(kind: string) => boolean} has
 */
function closedRaiseNote(offer, facing, has) {
  if (!facing || !has("call") || has("raise")) return "";
  if (has("all_in")) return "(no full raise: your stack covers at most a call, or a short all-in)";
  return "(raising is closed: the raises allowed are used up, an all-in for less did not reopen the betting for you, or every other player is all in)";
}

/**
 * @param {number | undefined} amount
 * @param {number | null | undefined} min
 * @param {number | null | undefined} max
 * @param {number | null | undefined} allIn
 * @returns {Verdict}
 */
function within(amount, min, max, allIn) {
  if (!Number.isInteger(amount)) return { ok: false, code: "bad_message", reason: "the amount is a whole number" };
  const value = /** @type {number} */ (amount);
  if (given(allIn) && value > allIn) {
    return { ok: false, code: "insufficient_chips", reason: `${value} is more than your stack allows (${allIn})` };
  }
  if ((given(min) && value < min) || (given(max) && value > max)) {
    return { ok: false, code: "illegal_amount", reason: `${value} is outside ${min}..${max}` };
  }
  return { ok: true, code: null, reason: "" };
}

/**
 * @param {number | null | undefined} value
 * @returns {value is number}
 */
function given(value) {
  return value !== null && value !== undefined;
}
