// The action bar: what you may do now, from the latest your_turn. It is rebuilt
// only when the decision changes, so a redraw never moves focus or wipes an
// amount being typed; a typed amount carries over to a fresh prompt, kept in range.

import { $, el } from "../dom.js";
import { promptHint } from "../describe.js";
import { currentPrompt, promptKey, turnMs } from "../state.js";
import { partialStrength, rerollStrength, rollStrength } from "../scoring.js";

let shownKey = null;

/** The one-key shortcuts, by key. They never fire while a text field or select has focus. */
export const SHORTCUTS = { r: "roll", k: "check", c: "call", f: "fold", p: "pass", a: "ante", i: "all_in" };
const KEY_OF = Object.fromEntries(Object.entries(SHORTCUTS).map(([key, kind]) => [kind, key]));

/**
 * A newcomer's first hand: what the decision is about, in a sentence, beside the bar.
 * "" when no tip applies. Their own dice give the odds ("Senio 7: beats 62 % ...").
 */
export function coachTip(state, prompt) {
  if (!prompt) return "";
  const m = state.model;
  const mine = m.seats.find((s) => s.player === m.you)?.dice ?? [];
  const strength = mine.length === 4 ? ` Your roll: ${rollStrength(mine)}.` : "";
  const rerolls = mine.length === 4 ? ` ${rerollStrength(mine)}.` : "";
  const sofar = mine.length && mine.length < 4 ? ` Your dice so far: ${partialStrength(mine)}.` : "";
  switch (prompt.phase) {
    case "roll":
      return "Roll your four dice: the best roll at the table takes the pot. Venus (6, 4, 3, 1) beats all; then any roll with a 6 (Senio), the higher its sum the better. The Rules button shows every roll.";
    case "betting":
      return `Check to stay in for free, or bet if your roll is strong; call to match a bet, fold to give up the hand (your chips in the pot stay there).${strength}`;
    case "draw":
      return `Click one of your dice to roll it again for the ante, or pass to keep them. 2s and 5s count for nothing: they are the dice to reroll.${strength}${rerolls}`;
    case "stud_ante":
      return `Every die is public in stud: pay the ante to see your next die, or fold if the others are well ahead.${sofar}`;
    default:
      return "";
  }
}

/** Redraw the bar if the decision changed; returns true when it was rebuilt. */
export function renderActions(state, handlers) {
  const prompt = currentPrompt(state);
  const key = promptKey(prompt);
  if (key === shownKey) return false;
  shownKey = key;
  const box = $("actions");
  const typed = {};
  for (const input of box.querySelectorAll("input[data-kind]")) typed[input.dataset.kind] = input.value;
  box.replaceChildren();
  box.classList.toggle("active", Boolean(prompt));
  if (!prompt) return true;
  const legal = prompt.legal;
  const can = (kind) => legal.actions.includes(kind);
  const button = (kind, label, fields = {}) => el("button", {
    type: "button", "data-testid": `action-${kind}`, "aria-keyshortcuts": KEY_OF[kind]?.toUpperCase(),
    title: KEY_OF[kind] ? `Shortcut: ${KEY_OF[kind].toUpperCase()}` : undefined,
    onclick: () => handlers.act(kind, fields),
  }, label);
  const pot = state.model.hand?.pot ?? 0;
  const currentBet = state.model.hand?.current_bet ?? 0;

  box.append(el("p", { class: "your-turn", "data-testid": "your-turn" },
    el("strong", {}, "Your turn"), ` · ${promptHint(prompt)} · `,
    el("span", { class: "timer mine", "data-deadline": prompt.deadline, "data-total": state.timerTotals.get(prompt.deadline) ?? turnMs(state) },
      el("span", { class: "timer-bar", "aria-hidden": "true" }, el("span", { class: "timer-fill" })),
      el("span", { class: "countdown" }), " s left"),
  ));
  const row = el("div", { class: "action-row" });
  if (can("roll")) row.append(button("roll", "Roll the dice"));
  if (can("check")) row.append(button("check", "Check"));
  if (can("call")) row.append(button("call", `Call ${legal.call_amount}`));
  if (can("bet")) {
    row.append(amountControl(handlers, "bet", "Bet", legal.bet_min, legal.bet_max, typed.bet, [
      ["min", "Min", legal.bet_min], ["half", "½ pot", Math.floor(pot / 2)], ["pot", "Pot", pot],
    ]));
  }
  if (can("raise")) {
    const afterCall = pot + legal.call_amount;
    row.append(amountControl(handlers, "raise", "Raise to", legal.raise_min, legal.raise_max, typed.raise, [
      ["min", "Min", legal.raise_min], ["half", "½ pot", currentBet + Math.floor(afterCall / 2)], ["pot", "Pot", currentBet + afterCall],
    ]));
  }
  if (can("all_in")) row.append(button("all_in", `All in (${legal.all_in_total})`));
  if (can("reroll")) row.append(el("p", { class: "hint" }, `Click one of your dice to reroll it for ${legal.reroll_cost}, or pass.`));
  if (can("pass")) row.append(button("pass", "Pass"));
  if (can("ante")) row.append(button("ante", `Pay ${legal.ante_amount} and stay in`));
  if (can("fold")) row.append(button("fold", "Fold"));
  box.append(row);
  return true;
}

/**
 * An amount: a number field (Enter submits), presets that are legal now, and
 * the button. A single legal amount is just a button. Out-of-range amounts are
 * never sent: the field is brought back into the range and the player told.
 */
function amountControl(handlers, kind, label, min, max, typed, presets) {
  const field = kind === "bet" ? "amount" : "to";
  const send = (value) => handlers.act(kind, { [field]: value });
  if (min === max) {
    return el("button", { type: "button", "data-testid": `action-${kind}`, onclick: () => send(min) }, `${label} ${min}`);
  }
  const clamp = (value) => Math.min(max, Math.max(min, value));
  const start = typed !== undefined && typed !== "" && Number.isFinite(Number(typed)) ? clamp(Math.round(Number(typed))) : min;
  const id = `amount-${kind}`;
  const input = el("input", {
    id, type: "number", inputmode: "numeric", min, max, step: 1, value: start, required: true,
    "data-testid": id, "data-kind": kind, "aria-describedby": `${id}-range ${id}-error`,
  });
  const problem = el("span", { id: `${id}-error`, class: "amount-error", "data-testid": `amount-error-${kind}`, role: "alert" });
  const go = el("button", { type: "submit", "data-testid": `action-${kind}` }, label);
  const seen = new Set();
  const presetButtons = presets
    .filter(([, , value]) => value >= min && value <= max && !seen.has(value) && seen.add(value))
    .map(([name, text, value]) => el("button", {
      type: "button", class: "preset", "data-testid": `preset-${kind}-${name}`, "aria-label": `${text}: ${value}`,
      onclick: () => {
        input.value = String(value);
        problem.textContent = "";
        input.focus();
      },
    }, `${text} ${value}`));
  const form = el("form", { class: "amount", "data-testid": `amount-form-${kind}`, novalidate: true },
    el("label", { for: id }, label), input,
    el("span", { id: `${id}-range`, class: "range" }, `${min}–${max}`),
    presetButtons.length ? el("span", { class: "presets", role: "group", "aria-label": `${label} presets` }, presetButtons) : "",
    go, problem);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = Number(input.value);
    if (input.value.trim() !== "" && Number.isInteger(value) && value >= min && value <= max) {
      send(value);
      return;
    }
    const fixed = Number.isFinite(value) && input.value.trim() !== "" ? clamp(Math.round(value)) : min;
    input.value = String(fixed);
    problem.textContent = `You can ${kind === "bet" ? "bet" : "raise to"} ${min} to ${max}. It is set to ${fixed} now: press Enter to confirm.`;
    input.focus();
  });
  input.addEventListener("input", () => { problem.textContent = ""; });
  return form;
}

/** The first control of the bar, to focus when a turn begins. */
export function firstControl() {
  return $("actions").querySelector("button, input");
}
