// The table: its heading, the banner (what happens next, your own standing),
// the seats with their dice and turn timers, the roll-offs and the results.

import { $, coveredDie, die, diceWithName, el, lineNode, nameNode } from "../dom.js";
import { between, busted, live, myStanding, tableWinner, variantLabel } from "../describe.js";
import { currentPrompt, failedHands, inviteLink, mayModerate, msLeft, turnMs } from "../state.js";
import { potLabel } from "../room-model.js";
import { partialStrength, rerollStrength, rerollWords, rollLabel, rollStrength } from "../scoring.js";
import { play } from "../alerts.js";
import { chipCount, flyChips, notePot, takeOff } from "../chips.js";

// What each seat's dice were when last drawn ("hand:player" -> faces), to animate the
// dice that just changed (a roll, a reroll) and to sound a roll; and the hands whose
// win was already celebrated.
const drawnDice = new Map();
let celebrated = "";
let drawnLive = ""; // the hand ("room:number") the last drawing showed in play
let flight = null; // the chips of the last hand won here, flying from the pot: [key, flight]

export function renderTable(state, handlers) {
  const m = state.model;
  if (!m) return;
  renderHead(state, handlers);
  renderBanner(state, handlers);
  renderSeats(state, handlers);
  renderRollOffs(state);
  renderFairAlert(state);
  const winner = tableWinner(m);
  $("result").replaceChildren(
    ...state.results.map((line) => lineNode("p", line)),
    !live(m) && m.hand ? diceCheck(state.verdicts.get(m.hand.number)) : "",
    winner ? lineNode("p", [{ name: winner.name }, ` wins the table: ${winner.player === m.you ? "you hold" : "they hold"} all ${winner.stack} chips.`], { class: "table-winner", "data-testid": "table-winner" }) : "",
    // A rematch: everyone starts again from the room's stack (the winner too, by choice).
    winner && m.role === "player" && m.seats.some((s) => s.player === m.you)
      ? el("p", {}, el("button", { type: "button", "data-testid": "rematch", onclick: () => handlers.buyIn() },
        `Rematch: start again with ${m.settings.starting_chips} chips`))
      : "",
  );
}

/** The name of a player in a dice check (who may have left since). */
function nameOf(state, player) {
  const m = state.model;
  return m.seats.find((s) => s.player === player)?.name ?? state.history.names[player] ?? m.names?.[player] ?? "a player";
}

/** The quiet mark under a finished hand: were its dice the ones committed to? */
export function diceCheck(verdict) {
  const status = verdict?.status ?? "waiting";
  const text = {
    verified: verdict?.source === "history"
      ? "✓ Dice verified, from the server's record of the hand: they are the dice committed to before it began."
      : `✓ Dice verified: they are the dice the server committed to before the hand began${verdict?.mixed ? ", mixed with your own entropy" : ""}.`,
    waiting: "Checking the dice…",
    unchecked: verdict?.reason === "partial" ? "This page missed the start of the hand: its dice are checked from the server's record." : "No dice were shown in this hand: nothing to check.",
    failed: "⚠ The dice check failed for this hand: see the warning at the top of the table.",
  }[status];
  return el("p", { class: `dice-check ${status}`, "data-testid": "dice-check", "data-status": status }, text);
}

/** The loud warning: every hand in this room whose dice did not match the commitments. */
function renderFairAlert(state) {
  const failed = failedHands(state);
  const box = $("fair-alert");
  box.hidden = !failed.length;
  if (!failed.length) {
    box.replaceChildren();
    return;
  }
  const key = JSON.stringify(failed);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren(
    el("h3", {}, "⚠ Warning: the dice failed the fairness check"),
    el("p", {}, "Before each hand the server commits to every player's dice. For the hands below, what it showed does not match that commitment, so the server could have chosen those dice. Think twice before playing on at this table."),
    el("ul", {}, failed.flatMap(([hand, verdict]) => verdict.problems.map((problem) => {
      const whose = !problem.player ? [": "]
        : problem.player === state.model.you ? [", your dice: "] : [", ", { name: nameOf(state, problem.player) }, "'s dice: "];
      return lineNode("li", [`Hand ${hand}`, ...whose, problem.text, "."]);
    }))),
  );
}

function renderHead(state, handlers) {
  const m = state.model;
  const hand = m.hand;
  const me = m.seats.find((s) => s.player === m.you);
  const facts = [];
  if (hand) facts.push(live(m) ? `Hand ${hand.number} · ${phaseWords(m)}` : `Hand ${hand.number} is over`);
  const pot = live(m) ? el("span", { class: "pot", "data-testid": "pot" }, `pot ${hand.pot}`) : null;
  if (pot) facts.push(pot);
  if (m.spectators) facts.push(`${m.spectators} watching`);
  if (m.role === "spectator") facts.push("you are watching");
  $("table-head").replaceChildren(
    el("h2", { id: "table-title" }, `${variantLabel(m.settings)} · ante ${m.settings.ante}`),
    facts.length ? el("p", { class: "table-info" }, facts.flatMap((f, i) => [i ? " · " : "", f])) : "",
    el("div", { class: "controls" },
      me && !busted(m, me)
        ? el("button", {
          type: "button", "data-testid": "toggle-ready",
          onclick: () => handlers.setReady(!me.ready),
        }, me.ready ? "Sit out next hands" : "Sit in")
        : "",
      m.role === "spectator" && m.seats.length < m.settings.max_players
        ? el("button", { type: "button", "data-testid": "take-seat", onclick: () => handlers.join(m.room, "player") }, "Take a free seat")
        : "",
      el("button", { type: "button", "data-testid": "leave", onclick: () => handlers.leave() }, "Leave the room"),
      mayModerate(state)
        ? el("button", { type: "button", "data-testid": "close-room", onclick: () => handlers.moderate("close_room") }, "Close the room")
        : "",
    ),
    inviteBox(state, handlers),
    botControls(state, handlers),
  );
  notePot(pot); // where the chips fly from when the hand is won
}

/** A private room's invite link, for its members to share, and a button that copies it. */
function inviteBox(state, handlers) {
  const m = state.model;
  if (!m.invite) return "";
  const link = inviteLink(`${location.origin}${location.pathname}`, m.room, m.invite);
  return el("div", { class: "invite", "data-testid": "invite" },
    el("p", {}, el("strong", {}, "Private table"), ": not listed in the lobby. Whoever opens this link can sit down (or watch, once the seats are taken)."),
    el("div", { class: "invite-row" },
      el("label", { for: "invite-link", class: "visually-hidden" }, "Invite link"),
      el("input", { id: "invite-link", "data-testid": "invite-link", readonly: true, value: link, onfocus: (e) => e.target.select() }),
      el("button", { type: "button", "data-testid": "copy-invite", onclick: () => handlers.copyInvite(link) }, "Copy link"),
    ),
    el("p", { class: "hint", role: "status", "data-testid": "invite-copied" }, state.inviteCopied),
  );
}

/** The room's creator adds computer players, of a level and speed, while a seat is free. */
function botControls(state, handlers) {
  const m = state.model;
  if (!m.creator || m.creator !== m.you || m.role !== "player") return "";
  const full = m.seats.length >= m.settings.max_players;
  const choice = state.botChoice;
  const select = (name, label, options) => el("label", {}, label,
    el("select", {
      "data-testid": `bot-${name}`,
      onchange: (e) => { choice[name] = e.target.value; },
    }, options.map(([value, text]) => el("option", { value, selected: choice[name] === value }, text))));
  return el("div", { class: "bot-controls", "data-testid": "bot-controls", role: "group", "aria-label": "Computer players" },
    select("level", "Computer level", [["beginner", "Beginner"], ["expert", "Expert"]]),
    select("speed", "Its speed", [["fast", "Fast"], ["normal", "Like a person"], ["slow", "Slow"]]),
    el("button", { type: "button", "data-testid": "add-bot", disabled: full, onclick: () => handlers.addBot() },
      full ? "Every seat is taken" : "Add a computer player"),
  );
}

function phaseWords(m) {
  const hand = m.hand;
  const words = { roll: "rolling", betting: "betting", draw: `draw round ${hand.draw_round}`, stud_ante: "antes" }[hand.phase] ?? hand.phase;
  return hand.street ? `street ${hand.street} · ${words}` : words;
}

function renderBanner(state, handlers) {
  const m = state.model;
  const lines = [];
  const standing = myStanding(m);
  if (standing) {
    const me = m.seats.find((s) => s.player === m.you);
    lines.push(el("p", { class: "standing", "data-testid": "standing" }, standing,
      me && busted(m, me) ? [" ", el("button", { type: "button", "data-testid": "buy-in", onclick: () => handlers.buyIn() }, `Buy in again (${m.settings.starting_chips})`)] : ""));
  }
  if (!live(m)) {
    const next = between(m);
    lines.push(el("p", { class: "next-hand", "data-testid": "next-hand" }, next.text,
      next.deadline ? [el("span", { class: "countdown", "data-deadline": next.deadline }), " s"] : ""));
  }
  $("banner").replaceChildren(...lines);
  $("banner").hidden = !lines.length;
}

function renderSeats(state, handlers) {
  const m = state.model;
  const hand = m.hand;
  const isLive = live(m);
  const prompt = currentPrompt(state);
  const liars = m.settings.variant === "liars";
  const moderating = mayModerate(state);
  const seats = $("seats");
  seats.dataset.count = String(m.seats.length);
  let rolled = false;
  const winners = !isLive && hand ? new Set(hand.winners ?? []) : new Set();
  const winKey = winners.size ? `${m.room}:${hand.number}` : "";
  // Seen live (a snapshot's winners come without `won`): not celebrated again after a reload.
  const celebrate = winKey && winKey !== celebrated && Boolean(hand.won);
  if (winKey) celebrated = winKey;
  if (celebrate) flight = [winKey, takeOff()];
  // Dice that changed since the last drawing tumble (and sound) while the hand is played,
  // and in the drawing that ends it: a batch (protocol 2.3) brings the last roll, or the
  // showdown's dice, with the hand's end.
  const handKey = hand ? `${m.room}:${hand.number}` : "";
  const moving = isLive || (handKey !== "" && handKey === drawnLive);
  drawnLive = isLive ? handKey : "";
  const total = Object.values(hand?.won ?? {}).reduce((a, b) => a + b, 0);
  seats.replaceChildren(...m.seats.map((seat) => {
    const mine = seat.player === m.you;
    const turn = isLive && hand.to_act.includes(seat.player);
    const out = busted(m, seat);
    const rerollable = mine && prompt?.legal.actions.includes("reroll");
    const dice = el("div", { class: "dice", "data-testid": `dice-${seat.player}` });
    if (seat.dice) {
      const secret = liars && mine && isLive && !hand.showdown;
      const key = `${m.room}:${hand?.number}:${seat.player}`;
      const before = drawnDice.get(key) ?? [];
      if (moving && seat.dice.some((face, i) => before[i] !== face)) rolled = true;
      drawnDice.set(key, [...seat.dice]);
      if (drawnDice.size > 64) drawnDice.delete(drawnDice.keys().next().value);
      seat.dice.forEach((face, i) => {
        const fresh = moving && before[i] !== face;
        const attrs = { "data-testid": `die-${seat.player}-${i}`, class: [secret && "private", fresh && "fresh"].filter(Boolean).join(" ") };
        if (rerollable) {
          dice.append(el("button", {
            type: "button", class: "reroll", "data-testid": `reroll-${i}`,
            "aria-label": `Reroll die ${i + 1}, now ${face}, for ${prompt.legal.reroll_cost}${state.showStrength !== false ? `: ${rerollWords(seat.dice, i)}` : ""}`,
            onclick: () => handlers.act("reroll", { die: i }),
          }, die(face, attrs)));
        } else dice.append(die(face, attrs));
      });
      if (secret && seat.dice.length) dice.append(el("small", { class: "private-note" }, "only you see these"));
    } else {
      for (let i = 0; i < seat.dice_count; i += 1) dice.append(coveredDie());
    }
    const notes = [];
    if (!seat.connected) notes.push("disconnected");
    if (out) notes.push("out of chips");
    else if (isLive && seat.folded) notes.push("folded");
    else if (isLive && !seat.in_hand) notes.push(m.sitting_out?.[seat.player] === "not_ready" || !seat.ready ? "sitting out" : "plays from the next hand");
    else if (!seat.ready) notes.push("sitting out");
    if (seat.bet) notes.push(`bet ${seat.bet}`);
    const classes = ["seat", winners.has(seat.player) && "winner", mine && "me", turn && "turn", seat.folded && isLive && "folded", !seat.connected && "away", !seat.ready && "out", out && "busted"];
    const name = seat.dice?.length === 4 ? rollLabel(seat.dice) : "";
    return el("div", { class: classes.filter(Boolean).join(" "), "data-testid": `seat-${seat.player}` },
      el("div", { class: "who" },
        nameNode(seat.name),
        mine ? el("span", { class: "you-badge", "data-testid": "you-badge" }, "You") : "",
        seat.bot ? el("span", { class: "bot", "data-testid": `bot-${seat.player}`, title: "a computer player" }, botLabel(seat)) : "",
        seat.bot && m.creator === m.you && m.role === "player"
          ? el("button", {
            type: "button", class: "remove-bot", "data-testid": `remove-bot-${seat.player}`,
            "aria-label": `Remove the computer player ${seat.name}`, onclick: () => handlers.removeBot(seat.player),
          }, "Remove")
          : "",
        seat.seat === m.button ? el("span", { class: "dealer", role: "img", title: "dealer button", "aria-label": "dealer button" }, "D") : "",
      ),
      winners.has(seat.player)
        ? el("div", { class: "win-badge", "data-testid": `winner-${seat.player}` },
          wonChips(seat.player, chipCount(hand.won?.[seat.player] ?? 0, total)),
          hand.won?.[seat.player] === undefined ? " wins the pot" : ` wins ${hand.won[seat.player]}`)
        : "",
      el("div", { class: "stack" }, `stack ${seat.stack}`),
      notes.length ? el("div", { class: "state", "data-testid": `state-${seat.player}` }, notes.join(" · ")) : "",
      turn ? timer(state, seat, hand, prompt) : "",
      dice,
      name ? el("div", { class: "hand-name", "data-testid": `roll-name-${seat.player}` }, name) : "",
      mine && state.showStrength !== false ? strength(seat.dice, rerollable, isLive && !seat.folded) : "",
      moderating && !mine && !seat.bot ? el("div", { class: "moderate" },
        el("button", { type: "button", "data-testid": `kick-${seat.player}`, onclick: () => handlers.moderate("kick", seat.player) }, "Remove"),
        el("button", { type: "button", "data-testid": `mute-${seat.player}`, onclick: () => handlers.moderate("mute", seat.player) }, "Mute"),
      ) : "",
    );
  }));
  if (rolled) play("roll");
  if (celebrate) play("win");
  if (flight && flight[0] === winKey) flyChips(seats.querySelectorAll(".won-chips"), flight[1]);
}

/** A winner's share as a row of chips (the ones that fly in from the pot). */
function wonChips(player, count) {
  const chips = Array.from({ length: count }, () => el("span", { class: "chip" }));
  return el("span", { class: "won-chips", "data-testid": `won-chips-${player}`, "data-count": String(count), "aria-hidden": "true" }, chips);
}

/**
 * Your dice's odds: four dice's name and share of rolls beaten; fewer (stud), what they
 * are worth on average over the dice to come; at a reroll (draw), what each face would
 * make of them. Dice to come only while they can: not once folded, nor after the hand.
 */
function strength(dice, rerollable, coming) {
  const line = dice?.length === 4 ? rollStrength(dice) : coming ? partialStrength(dice) : "";
  if (!line) return "";
  return [
    el("div", { class: "strength", "data-testid": "hand-strength" }, line),
    rerollable ? el("div", { class: "strength", "data-testid": "reroll-odds" }, rerollStrength(dice)) : "",
  ];
}

/** "computer", with its level and speed when the server says them. */
function botLabel(seat) {
  const words = { beginner: "beginner", expert: "expert", fast: "fast", slow: "slow" };
  const extra = [words[seat.bot_level], words[seat.bot_speed]].filter(Boolean);
  return extra.length ? `computer · ${extra.join(", ")}` : "computer";
}

/** The turn timer of a seat: a bar that drains and changes colour, and the seconds left. */
function timer(state, seat, hand, prompt) {
  // The deadline comes from waiting_for, our own prompt, or (a roll phase) the one shared with ours.
  let deadline = hand.deadline;
  if (!deadline && prompt && (seat.player === state.model.you || hand.phase === "roll")) deadline = prompt.deadline;
  if (!deadline || msLeft(state, deadline) < -5000) {
    // After a reload the snapshot does not say when another player's time runs out.
    return el("div", { class: "timer", "data-testid": `timer-${seat.player}` }, el("span", { class: "timer-label" }, "to act"));
  }
  return el("div", {
    class: "timer", "data-testid": `timer-${seat.player}`, "data-deadline": deadline,
    "data-total": state.timerTotals.get(deadline) ?? turnMs(state),
  },
  el("span", { class: "timer-label" }, "to act"),
  el("span", { class: "timer-bar", "aria-hidden": "true" }, el("span", { class: "timer-fill" })),
  el("span", { class: "countdown" }),
  " s");
}

function renderRollOffs(state) {
  const box = $("rolloffs");
  const m = state.model;
  const count = m.hand?.pots.length ?? 1;
  box.replaceChildren(...state.rollOffs.map((r) => el("div", { class: "rolloff", "data-testid": `rolloff-${r.pot}-${r.round}` },
    el("h3", {}, `Roll-off for ${potLabel(r.pot, count)}, round ${r.round}: ${r.reason === "tie" ? "a tie" : "nobody had a winning roll"}`),
    el("ul", {}, r.rolls.map((roll) => el("li", {}, nameNode(m.seats.find((s) => s.player === roll.player)?.name ?? m.names?.[roll.player] ?? "a player"), " ", diceWithName(roll.dice)))),
  )));
  box.hidden = !state.rollOffs.length;
}

/** Every 250 ms: the countdowns and time bars. */
export function tick(state) {
  for (const node of document.querySelectorAll("[data-deadline]")) {
    const deadline = Number(node.dataset.deadline);
    const left = Math.max(0, msLeft(state, deadline));
    const seconds = String(Math.ceil(left / 1000));
    const countdown = node.classList.contains("countdown") ? node : node.querySelector(".countdown");
    if (countdown && countdown.textContent !== seconds) countdown.textContent = seconds;
    const fill = node.querySelector(".timer-fill");
    if (fill) {
      const share = Math.min(1, left / Number(node.dataset.total || 1));
      fill.style.width = `${(share * 100).toFixed(1)}%`;
      node.dataset.level = share > 0.5 ? "plenty" : share > 0.2 ? "low" : "critical";
    }
  }
}
