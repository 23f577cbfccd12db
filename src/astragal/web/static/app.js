// astragal web table: the page. Every text a user typed reaches the page through textContent
// (the el() helper below); nothing here uses innerHTML. The server rolls; this page only shows.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

const state = { room: null, member: null, key: null, last: 0, seen: new Map(), ws: null,
                retry: 500, sheet: { stats: {}, macros: {} }, members: [] };

function keyName(roomId) { return "astragal:key:" + roomId; }

async function api(method, path, body, key) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (key) headers["Authorization"] = "Bearer " + key;
  const res = await fetch(path, { method, headers,
                                  body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  const type = res.headers.get("Content-Type") || "";
  if (type.includes("json")) data = await res.json();
  else data = await res.text();
  if (!res.ok) {
    const err = new Error((data && data.message) || ("HTTP " + res.status));
    err.status = res.status; err.data = data || {};
    throw err;
  }
  return data;
}

// An error with a span: the typed line, a caret under the mistake, then the message.
function showError(box, err) {
  clear(box);
  const d = err.data || {};
  if (d.text !== undefined && d.text !== null && Array.isArray(d.span)) {
    const [s, e] = d.span;
    const line = d.text.replace(/\n/g, " ");
    box.append(el("span", { class: "err-line" }, line), "\n",
               el("span", { class: "caret" }, " ".repeat(Math.max(0, s)) +
                  "^".repeat(Math.max(1, Math.min(e, line.length + 1) - s))), "\n");
  }
  box.append(el("span", { class: "err-msg" }, err.message));
  if (d.expanded) box.append("\n", el("span", { class: "hint" }, "(rolled as: " + d.expanded + ")"));
}

// ---------------------------------------------------------------------------------------------
// Home: open a room, or quick odds

async function showHome() {
  $("home").hidden = false;
  $("room-title").textContent = "a shared dice table";
  const systems = await api("GET", "/api/systems");
  const select = $("create-system");
  for (const s of systems) select.append(el("option", { value: s.name }, s.title + " (" + s.prefixes.join(" ") + ")"));
  $("create-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("create-error").textContent = "";
    try {
      const made = await api("POST", "/api/rooms", { name: $("create-name").value,
        system: select.value, gm_name: $("create-gm").value });
      localStorage.setItem(keyName(made.room.id), made.key);
      location.assign("/r/" + made.room.id);
    } catch (err) { showError($("create-error"), err); }
  });
  $("home-odds-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clear($("home-odds-error"));
    try {
      const odds = await api("GET", "/api/odds?text=" + encodeURIComponent($("home-odds-text").value));
      const box = $("home-odds"); clear(box);
      box.append(el("pre", { class: "odds-pre" }, odds.odds_text));
    } catch (err) { showError($("home-odds-error"), err); }
  });
}

// ---------------------------------------------------------------------------------------------
// Joining

async function showJoin(roomId) {
  let room;
  try { room = await api("GET", "/api/rooms/" + encodeURIComponent(roomId)); }
  catch (err) { $("room-title").textContent = err.message; return; }
  $("join").hidden = false;
  $("room-title").textContent = room.name;
  $("room-system").textContent = room.system;
  $("join-room").textContent = room.name;
  $("join-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clear($("join-error"));
    try {
      const joined = await api("POST", "/api/rooms/" + encodeURIComponent(roomId) + "/members",
                               { name: $("join-name").value });
      localStorage.setItem(keyName(roomId), joined.key);
      $("join").hidden = true;
      await enterRoom(roomId, joined.key);
    } catch (err) { showError($("join-error"), err); }
  });
  $("join-name").focus();
}

// ---------------------------------------------------------------------------------------------
// The room

async function enterRoom(roomId, key) {
  let me;
  try { me = await api("GET", "/api/rooms/" + encodeURIComponent(roomId) + "/me", undefined, key); }
  catch (err) {
    if (err.status === 401) { localStorage.removeItem(keyName(roomId)); return showJoin(roomId); }
    $("room-title").textContent = err.message; return;
  }
  state.room = me.room; state.member = me.member; state.key = key; state.sheet = me.sheet;
  $("room").hidden = false;
  document.title = me.room.name + " · astragal";
  $("room-title").textContent = me.room.name;
  $("room-system").textContent = me.room.system;
  $("whoami").textContent = me.member.name + (me.member.role === "gm" ? " (GM)" : "");
  $("join-link").value = location.origin + "/r/" + me.room.id;
  // Your own link, with your key after '#' (never sent to the server): opens the room as you
  // on another device.
  $("gm-link-box").hidden = false;
  $("gm-link").value = location.origin + "/r/" + me.room.id + "#key=" + key;
  $("gm-link-what").textContent = me.member.role === "gm" ? "Your GM link" : "Your personal link";
  showHead(me.head.hash);
  renderMembers(me.members);
  renderSheet();
  connect();
  $("roll-text").focus();
}

function renderMembers(members) {
  state.members = members;
  const ul = $("members"); clear(ul);
  for (const m of members) ul.append(el("li", {}, m.name, m.role === "gm" ? el("span", { class: "badge" }, "GM") : null));
}

function sheetLines(obj) { return Object.entries(obj).map(([k, v]) => k + " = " + v).join("\n"); }

function renderSheet() {
  $("sheet-stats").value = sheetLines(state.sheet.stats || {});
  $("sheet-macros").value = sheetLines(state.sheet.macros || {});
  const box = $("macro-buttons"); clear(box);
  for (const [name, text] of Object.entries(state.sheet.macros || {})) {
    box.append(el("button", { type: "button", class: "chip", title: text,
                              onclick: () => roll(name) }, name));
  }
}

function parseLines(text, what) {
  const out = {};
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf("=");
    if (at < 0) throw new Error(what + " line " + (i + 1) + ": write name = value");
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return out;
}

async function saveSheet() {
  clear($("sheet-error")); $("sheet-saved").textContent = "";
  try {
    const body = { stats: parseLines($("sheet-stats").value, "character"),
                   macros: parseLines($("sheet-macros").value, "macros") };
    state.sheet = await api("PUT", roomPath("/sheet"), body, state.key);
    renderSheet();
    $("sheet-saved").textContent = "saved";
  } catch (err) { showError($("sheet-error"), err); }
}

function roomPath(rest) { return "/api/rooms/" + encodeURIComponent(state.room.id) + rest; }

// ---------------------------------------------------------------------------------------------
// Live log

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(proto + "//" + location.host + roomPath("/live"));
  state.ws = ws;
  let ping = null;
  ws.addEventListener("open", () => {
    ws.send(JSON.stringify({ key: state.key, after: state.last }));
    ping = setInterval(() => ws.readyState === 1 && ws.send("ping"), 25000);
  });
  ws.addEventListener("message", (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "hello") { setLive(true); state.retry = 500; }
    else if (msg.type === "entry") addEntry(msg.entry);
    else if (msg.type === "members") renderMembers(msg.members);
    else if (msg.type === "member") renderMembers([...state.members.filter((m) => m.id !== msg.member.id), msg.member]);
    else if (msg.type === "head") showHead(msg.hash);
    else if (msg.type === "error") { setLive(false, msg.message); }
  });
  ws.addEventListener("close", (ev) => {
    clearInterval(ping); setLive(false);
    if (ev.code === 4401 || ev.code === 4404 || ev.code === 4429) return;  // no use retrying
    setTimeout(connect, state.retry);
    state.retry = Math.min(state.retry * 2, 10000);
  });
}

function setLive(on, why) {
  const live = $("live");
  live.hidden = false;
  live.textContent = on ? "live" : "offline";
  live.className = "live " + (on ? "on" : "off");
  live.title = why || "";
}

const SEEN_BY = { public: "everyone", gm: "GM + roller", blind: "GM only" };

function addEntry(entry) {
  if (state.seen.has(entry.id)) return;
  state.last = Math.max(state.last, entry.id);
  const li = renderEntry(entry);
  state.seen.set(entry.id, li);
  // entries arrive in order, but a roll's own response may race its live copy
  const log = $("log");
  let before = null;
  for (const node of log.children) { if (Number(node.dataset.id) > entry.id) { before = node; break; } }
  log.insertBefore(li, before);
  if (!before) li.scrollIntoView({ block: "nearest" });
}

function showHead(hash) { $("head-hash").textContent = hash.slice(0, 16) + "…"; $("head-hash").title = hash; }

function renderEntry(e) {
  const time = new Date(e.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const head = el("div", { class: "entry-head" },
    el("span", { class: "who" }, e.who), e.role === "gm" ? el("span", { class: "badge" }, "GM") : null,
    el("code", { class: "text" }, e.text),
    e.notation && e.notation !== e.text ? el("span", { class: "hint" }, "→ " + e.notation) : null,
    e.visibility !== "public" ? el("span", { class: "vis vis-" + e.visibility }, SEEN_BY[e.visibility]) : null,
    el("time", { datetime: e.at, title: e.at }, time));
  const li = el("li", { class: "entry outcome-" + (e.outcome || "hidden"), "data-id": e.id,
                        "data-visibility": e.visibility }, head);
  if (e.hidden) {
    li.append(el("div", { class: "verdict hidden-roll" }, "A blind roll: only the GM sees the result."));
    return li;
  }
  const dice = el("div", { class: "dice" });
  for (const d of e.roll.dice) {
    const chip = el("span", { class: "die" + (d.kept === false ? " dropped" : ""),
                              title: (d.group ? d.group + ": " : "") + "d" + d.size +
                                     (d.faces ? " rolled " + d.faces.join(" then ") : "") +
                                     (d.note ? " (" + d.note + ")" : "") },
      el("span", { class: "size" }, "d" + d.size), el("span", { class: "face" }, d.kept === false && !d.face ? "–" : d.face));
    dice.append(chip);
  }
  const transcript = el("pre", { class: "transcript", hidden: true }, e.transcript_text);
  const tools = el("div", { class: "tools" },
    el("button", { type: "button", class: "link", onclick: () => { transcript.hidden = !transcript.hidden; } }, "why?"),
    el("button", { type: "button", class: "link", onclick: () => showOdds(e.notation, e.system, true) }, "odds"));
  li.append(dice, el("div", { class: "verdict" }, e.verdict), tools, transcript);
  return li;
}

// ---------------------------------------------------------------------------------------------
// Rolling and odds

async function roll(text) {
  clear($("roll-error"));
  const button = $("roll-button");
  button.disabled = true;
  try {
    const entry = await api("POST", roomPath("/rolls"),
                            { text, visibility: $("roll-visibility").value }, state.key);
    addEntry(entry);
    return true;
  } catch (err) { showError($("roll-error"), err); return false; }
  finally { button.disabled = false; }
}

function pct(p) { return (100 * p).toFixed(p > 0 && p < 0.001 ? 4 : 2) + "%"; }

async function showOdds(text, system, exact) {
  clear($("roll-error"));
  let odds;
  try {
    odds = exact
      ? await api("GET", "/api/odds?text=" + encodeURIComponent(text) + "&system=" + encodeURIComponent(system || ""))
      : await api("GET", roomPath("/odds?text=" + encodeURIComponent(text)), undefined, state.key);
  } catch (err) { showError($("roll-error"), err); return; }
  $("odds-panel").hidden = false;
  $("odds-of").textContent = odds.notation;
  const bars = $("odds-outcomes"); clear(bars);
  for (const [k, name, p] of odds.outcome_rows) {
    const fill = el("span", { class: "fill outcome-" + k });
    fill.style.width = (100 * p).toFixed(2) + "%";
    bars.append(el("div", { class: "bar-row" }, el("span", { class: "label" }, name),
                   el("span", { class: "bar" }, fill), el("span", { class: "num" }, pct(p))));
  }
  const chart = $("odds-chart"); clear(chart);
  const top = Math.max(...odds.value_rows.map((r) => r[1]), 1e-12);
  for (const [v, p] of odds.value_rows) {
    const col = el("span", { class: "col", title: v + ": " + pct(p) });
    col.style.height = (100 * p / top).toFixed(1) + "%";
    chart.append(col);
  }
  const table = $("odds-table"); clear(table);
  table.append(el("tr", {}, el("th", {}, odds.value_name || "value"), el("th", {}, "P(=)"),
                  el("th", {}, "P(≥)"), el("th", {}, "P(≤)")));
  for (const [v, p, atLeast, atMost] of odds.value_rows) {
    table.append(el("tr", {}, el("td", {}, v), el("td", {}, pct(p)), el("td", {}, pct(atLeast)),
                    el("td", {}, pct(atMost))));
  }
  $("odds-text").textContent = odds.odds_text;
}

async function download(kind) {
  const res = await fetch(roomPath("/export." + kind), { headers: { Authorization: "Bearer " + state.key } });
  const blob = await res.blob();
  const a = el("a", { href: URL.createObjectURL(blob), download: "astragal-" + state.room.id + "." + kind });
  document.body.append(a); a.click(); a.remove();
}

// ---------------------------------------------------------------------------------------------
// Start

function wire() {
  const past = []; let back = 0;
  $("roll-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("roll-text").value;
    if (await roll(text)) { past.push(text); back = 0; $("roll-text").value = ""; }
  });
  $("roll-text").addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowUp" && past.length) {
      back = Math.min(back + 1, past.length); $("roll-text").value = past[past.length - back];
      ev.preventDefault();
    }
  });
  $("odds-button").addEventListener("click", () => showOdds($("roll-text").value, null, false));
  $("save-sheet").addEventListener("click", saveSheet);
  $("copy-join").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($("join-link").value));
  $("export-json").addEventListener("click", () => download("json"));
  $("export-md").addEventListener("click", () => download("md"));
}

async function start() {
  wire();
  const m = location.pathname.match(/^\/r\/([A-Za-z0-9_-]{1,64})$/);
  if (!m) return showHome();
  const roomId = m[1];
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("key");
  if (fromLink) {
    localStorage.setItem(keyName(roomId), fromLink);
    history.replaceState(null, "", location.pathname);  // the key leaves the address bar
  }
  const key = localStorage.getItem(keyName(roomId));
  if (key) return enterRoom(roomId, key);
  return showJoin(roomId);
}

start();
