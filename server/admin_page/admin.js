// The operator's page: a token, then the API's views every two seconds and its acts.
// The token stays in this tab (sessionStorage); every request carries it as a bearer token.

const api = "/admin/api/";
let token = sessionStorage.getItem("tali-operator-token") || "";
let timer = null;

const $ = (selector) => document.querySelector(selector);

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  row.append(td);
  return td;
}

function button(label, title, act) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.title = title;
  b.addEventListener("click", act);
  return b;
}

async function call(method, path, query = {}) {
  const url = new URL(api + path, location.href);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  const reply = await fetch(url, { method, headers: { Authorization: `Bearer ${token}` } });
  const body = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new Error(body.error || `${reply.status}`);
  return body;
}

function say(text) {
  $("#status").textContent = text;
}

async function act(method, path, query) {
  try {
    await call(method, path, query);
    say("");
    await refresh();
  } catch (error) {
    say(`refused: ${error.message}`);
  }
}

function showRooms(rooms) {
  const body = $("#rooms tbody");
  body.replaceChildren();
  for (const room of rooms) {
    const row = document.createElement("tr");
    row.dataset.room = room.room;
    cell(row, room.name ? `${room.name} (${room.room})` : room.room);
    cell(row, room.variant);
    cell(row, room.node);
    cell(row, room.state);
    cell(row, room.hand);
    cell(row, room.pot);
    const players = cell(row, "");
    for (const p of room.players) {
      const span = document.createElement("span");
      span.className = "player";
      span.dataset.player = p.player;
      span.textContent = `${p.name}${p.bot ? " (bot)" : ""}: ${p.stack}${p.connected ? "" : ", away"}`;
      if (!p.bot) {
        span.append(button("Kick", `kick ${p.name}`, () =>
          act("POST", `rooms/${encodeURIComponent(room.room)}/kick`, { player: p.player, reason: "kicked by the operator" })));
      }
      players.append(span);
    }
    cell(row, room.spectators);
    const acts = cell(row, "");
    acts.append(button("Close", `close ${room.room}`, () =>
      act("POST", `rooms/${encodeURIComponent(room.room)}/close`, { reason: "closed by the operator" })));
    body.append(row);
  }
}

function showPlayers(players) {
  const body = $("#players tbody");
  body.replaceChildren();
  for (const p of players) {
    const row = document.createElement("tr");
    cell(row, p.player);
    cell(row, p.name);
    cell(row, p.account);
    cell(row, p.address);
    cell(row, p.connected ? "yes" : "away");
    cell(row, p.since ? new Date(p.since).toLocaleTimeString() : "");
    cell(row, Object.keys(p.rooms).join(", "));
    cell(row, p.node);
    body.append(row);
  }
}

function showNodes(nodes) {
  const body = $("#nodes tbody");
  body.replaceChildren();
  for (const n of nodes) {
    const row = document.createElement("tr");
    cell(row, n.node);
    cell(row, n.url);
    cell(row, n.draining ? "yes" : "no");
    cell(row, n.rooms.map((r) => `${r.room} (gen ${r.generation}${r.expires_in === null ? "" : `, ${r.expires_in} s`})`).join(", "));
    const acts = cell(row, "");
    acts.append(button(n.draining ? "Stop draining" : "Drain", `drain ${n.node}`, () =>
      act("POST", `nodes/${encodeURIComponent(n.node)}/drain`, { on: n.draining ? "false" : "true" })));
    body.append(row);
  }
}

function showLog(entries) {
  const body = $("#log tbody");
  body.replaceChildren();
  for (const e of entries) {
    const row = document.createElement("tr");
    cell(row, new Date(e.at).toLocaleString());
    cell(row, e.action);
    cell(row, e.actor_name ? `${e.actor_name} (${e.actor})` : e.actor);
    cell(row, e.target_name ? `${e.target_name} (${e.target})` : e.target);
    cell(row, e.room);
    cell(row, e.reason);
    cell(row, e.text ? `"${e.text}"` : e.until ? `until ${new Date(e.until).toLocaleString()}` : "");
    body.append(row);
  }
}

async function refresh() {
  try {
    const [rooms, players, nodes, log] = await Promise.all([
      call("GET", "rooms"), call("GET", "players"), call("GET", "nodes"), call("GET", "moderation", { limit: "50" }),
    ]);
    showRooms(rooms);
    showPlayers(players);
    showNodes(nodes);
    showLog(log);
    $("#console").hidden = false;
    document.body.dataset.loaded = String(Date.now());
  } catch (error) {
    say(`cannot read the operator's API: ${error.message}`);
  }
}

function start() {
  clearInterval(timer);
  refresh();
  timer = setInterval(refresh, 2000);
}

$("#login").addEventListener("submit", (event) => {
  event.preventDefault();
  token = $("#token").value.trim();
  sessionStorage.setItem("tali-operator-token", token);
  say("");
  start();
});

$("#notice").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("#notice-text").value.trim();
  if (text) act("POST", "notice", { text }).then(() => { $("#notice-text").value = ""; });
});

if (token) start();
