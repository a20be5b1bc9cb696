// legal(): what a your_turn offers, in words and as messages, and whether a message
// is within it. Offers as the server sends them (protocol/README.md, your_turn).

import assert from "node:assert/strict";
import { test } from "node:test";
import { legal } from "../src/legal.js";

const turn = (phase, offer) => ({
  type: "your_turn", room: "r_7Hq2", hand: 3, phase, deadline: 0, seconds_left: 30,
  legal: { call_amount: 0, bet_min: null, bet_max: null, raise_min: null, raise_max: null,
    all_in_total: null, reroll_cost: null, ante_amount: null, ...offer },
});

test("facing a bet in no-limit: call, a raise range up to the stack, all in as a raise", () => {
  const offer = legal(turn("betting", {
    actions: ["fold", "call", "raise", "all_in"], call_amount: 10, raise_min: 20, raise_max: 96, all_in_total: 96,
  }));
  assert.deepEqual(offer.options.map((o) => o.action), ["fold", "call", "raise", "all_in"]);
  assert.equal(offer.option("call").chips, 10);
  assert.deepEqual(offer.option("raise").message, { type: "raise", room: "r_7Hq2", to: 20 });
  assert.match(offer.option("raise").text, /raise to 20 to 96 .*whole stack/);
  assert.match(offer.option("all_in").text, /raise to 96/);
  assert.deepEqual(offer.check({ type: "raise", to: 50 }), { ok: true, code: null, reason: "" });
  assert.equal(offer.check({ type: "raise", to: 15 }).code, "illegal_amount");
  assert.equal(offer.check({ type: "raise", to: 200 }).code, "insufficient_chips");
  assert.equal(offer.check({ type: "bet", amount: 20 }).code, "illegal_action");
  assert.equal(offer.check({ type: "check" }).code, "illegal_action");
});

test("pot limit caps a bet below the stack, and says so", () => {
  const offer = legal(turn("betting", { actions: ["check", "bet", "all_in"], bet_min: 2, bet_max: 9, all_in_total: 50 }));
  assert.match(offer.option("bet").text, /bet 2 to 9 .*pot limit/);
  assert.equal(offer.check({ type: "bet", amount: 10 }).code, "illegal_amount");
  assert.equal(offer.check({ type: "bet", amount: 60 }).code, "insufficient_chips");
});

test("fixed limit: one amount", () => {
  const offer = legal(turn("betting", { actions: ["fold", "call", "raise"], call_amount: 4, raise_min: 8, raise_max: 8 }));
  assert.match(offer.option("raise").text, /exactly 8 \(fixed limit\)/);
  assert.equal(offer.check({ type: "raise", to: 8 }).ok, true);
  assert.equal(offer.check({ type: "raise", to: 9 }).code, "illegal_amount");
});

test("no raise facing a bet: the reopening rule, explained; a short stack's all in is a call", () => {
  const closed = legal(turn("betting", { actions: ["fold", "call"], call_amount: 6 }));
  assert.match(closed.explain(), /raising is closed/);
  const short = legal(turn("betting", { actions: ["fold", "call", "all_in"], call_amount: 5, all_in_total: 5 }));
  assert.match(short.option("all_in").text, /a call with your whole stack/);
  const shortRaise = legal(turn("betting", {
    actions: ["fold", "call", "raise", "all_in"], call_amount: 10, raise_min: 30, raise_max: 40, all_in_total: 25,
  }));
  assert.match(shortRaise.option("all_in").text, /does not reopen the betting/);
});

test("a stack below the minimum bet is offered all in alone: a bet for less", () => {
  const offer = legal(turn("betting", { actions: ["check", "all_in"], all_in_total: 1 }));
  assert.match(offer.option("all_in").text, /less than the minimum bet/);
});

test("draw, stud and roll phases", () => {
  const draw = legal(turn("draw", { actions: ["reroll", "pass"], reroll_cost: 2 }));
  assert.deepEqual(draw.option("reroll").message, { type: "reroll", room: "r_7Hq2", die: 0 });
  assert.equal(draw.check({ type: "reroll", die: 4 }).code, "bad_message");
  assert.equal(draw.check({ type: "reroll", die: 3 }).ok, true);
  const stud = legal(turn("stud_ante", { actions: ["ante", "fold"], ante_amount: 1 }));
  assert.equal(stud.option("ante").chips, 1);
  const roll = legal(turn("roll", { actions: ["roll"] }));
  assert.equal(roll.can("roll"), true);
  assert.equal(roll.can("fold"), false);
  assert.match(roll.explain(), /^Your turn \(hand 3, roll\):\n- roll/);
});
