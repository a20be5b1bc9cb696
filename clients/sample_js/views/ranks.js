// The leaderboard and a profile (protocol 2.2: `leaderboard`, `profile`), in the lobby.

import { $ } from "../dom.js";

function text(tag, content) {
  const node = document.createElement(tag);
  node.textContent = String(content);
  return node;
}

function showProfile(profile) {
  const box = $("profile");
  box.replaceChildren(text("h3", `${profile.name ?? profile.account} (${profile.account})`));
  if (!profile.ratings.length) box.append(text("p", "No rated hands yet."));
  for (const r of profile.ratings) {
    box.append(text("p", `${r.variant}: rating ${r.rating.toFixed(1)} (#${r.rank}), ${r.hands} hands, ${r.chips_won >= 0 ? "+" : ""}${r.chips_won} chips`));
  }
  box.hidden = false;
}

/** Wire the leaderboard form; `attempt` shows a refusal in words (input.js). */
export function setUpRanks(client, attempt) {
  const profile = async (account) => {
    const reply = await attempt(client.request("profile", account ? { account } : {}));
    if (reply) showProfile(reply);
  };
  $("ranks-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const reply = await attempt(client.request("leaderboard", { variant: $("ranks-variant").value }));
    if (!reply) return;
    const body = $("ranks").querySelector("tbody");
    body.replaceChildren();
    for (const e of reply.entries) {
      const row = document.createElement("tr");
      const who = document.createElement("button");
      who.type = "button";
      who.className = "link";
      who.textContent = e.name;
      who.title = e.account;
      who.addEventListener("click", () => profile(e.account));
      const cell = document.createElement("td");
      cell.append(who);
      row.append(text("td", e.rank), cell, text("td", e.rating.toFixed(1)), text("td", e.hands), text("td", e.chips_won));
      body.append(row);
    }
    $("ranks").hidden = false;
  });
  $("my-profile").addEventListener("click", () => profile(null));
}
