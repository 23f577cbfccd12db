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
    else if (k === "style") node.style.cssText = v;
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

const MAX_ROLL = 500;  // the table's limit on a roll's text (the server says the same)
// A ping every 4 s, its pong within 3 s, the hello within 5 s of opening: a stalled line is said
// to be down within 7 s; new tries every 0.5, 1, 2, then 4 s
const PING_EVERY = 4000, PONG_WITHIN = 3000, HELLO_WITHIN = 5000, RETRY_MOST = 4000;

const state = { room: null, member: null, key: null, last: 0, seen: new Map(), ws: null,
                retry: 500, sheet: { stats: {}, macros: {} }, systems: [], backlog: 0,
                unread: 0, members: [], fight: null, turns: null, revealed: new Set(),
                fresh: 0, title: "astragal table", revealedBy: new Map(), luck: null,
                luckSoon: 0, fightAt: 0, turnsAt: 0, fightBy: null, aims: new Map() };

function keyName(roomId) { return "astragal:key:" + roomId; }
function historyName(roomId) { return "astragal:history:" + roomId; }

// ---------------------------------------------------------------------------------------------
// Talking to the server

async function api(method, path, body, key) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (key) headers["Authorization"] = "Bearer " + key;
  let res;
  try {
    res = await fetch(path, { method, headers,
                              body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (_) {
    const err = new Error("The table's server cannot be reached: check your connection, or " +
                          "whether the server is running, and try again.");
    err.status = 0; err.data = {};
    throw err;
  }
  let data = null;
  const type = res.headers.get("Content-Type") || "";
  try { data = type.includes("json") ? await res.json() : await res.text(); } catch (_) { data = null; }
  if (!res.ok) {
    let message = (data && data.message) || null;
    if (!message) {
      message = res.status >= 500
        ? "The table's server had a problem (HTTP " + res.status + "); try again in a moment."
        : "The server refused this (HTTP " + res.status + ").";
    }
    const err = new Error(message);
    err.status = res.status; err.data = (data && typeof data === "object") ? data : {};
    throw err;
  }
  return data;
}

// An error with a span: the typed line, a caret under the mistake, then the message.
function showError(box, err) {
  clear(box);
  const d = err.data || {};
  // an error about a request (the text, the server down) goes once the text changes or the
  // table is live again; a sign-out's stays until the page is reloaded
  box.dataset.passing = err.status !== undefined ? "yes" : "";
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
// Theme: the system's preference until the toggle picks one (kept on this device)

function applyTheme() {
  const chosen = localStorage.getItem("astragal:theme");
  const dark = chosen ? chosen === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
  const t = $("theme-toggle");
  t.setAttribute("aria-pressed", dark ? "true" : "false");
  t.querySelector(".theme-word").textContent = "dark";
  t.title = dark ? "switch to the light theme" : "switch to the dark theme";
}

function toggleTheme() {
  const dark = document.documentElement.dataset.theme === "dark";
  localStorage.setItem("astragal:theme", dark ? "light" : "dark");
  applyTheme();
}

// ---------------------------------------------------------------------------------------------
// Home: open a room, or quick odds

async function loadSystems() {
  if (!state.systems.length) state.systems = await api("GET", "/api/systems");
  return state.systems;
}

function systemInfo(name) { return state.systems.find((s) => s.name === name) || { examples: [] }; }

async function showHome() {
  $("home").hidden = false;
  $("room-title").textContent = "a shared dice table";
  const select = $("create-system");
  try { await loadSystems(); } catch (err) { showError($("create-error"), err); return; }
  for (const s of state.systems) select.append(el("option", { value: s.name }, s.title + " (" + s.prefixes.join(" ") + ")"));
  select.addEventListener("change", () => {
    const ex = systemInfo(select.value).examples || [];
    $("create-examples").textContent = ex.length ? "Rolls in this game look like: " + ex.slice(0, 4).join("   ") : "";
  });
  $("create-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clear($("create-error"));
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
    $("home-odds").hidden = true;  // an error is never shown above the odds of an earlier text
    try {
      const odds = await api("GET", "/api/odds?text=" + encodeURIComponent($("home-odds-text").value));
      renderOdds($("home-odds"), odds);
      $("home-odds").prepend(el("h3", {}, "Exact odds ", el("span", { class: "mono" }, odds.notation)));
      $("home-odds").hidden = false;
    } catch (err) { showError($("home-odds-error"), err); }
  });
}

// ---------------------------------------------------------------------------------------------
// Joining

async function showJoin(roomId, why) {
  let room;
  try { room = await api("GET", "/api/rooms/" + encodeURIComponent(roomId)); }
  catch (err) { $("room-title").textContent = err.message; return; }
  $("join").hidden = false;
  $("room").hidden = true;
  $("room-title").textContent = room.name;
  $("room-system").textContent = room.system;
  $("join-room").textContent = room.name;
  if (why) showError($("join-error"), new Error(why));
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

const wide = matchMedia("(min-width: 901px)");
const phone = matchMedia("(max-width: 640px)");

async function enterRoom(roomId, key) {
  let me;
  try { me = await api("GET", "/api/rooms/" + encodeURIComponent(roomId) + "/me", undefined, key); }
  catch (err) {
    if (err.status === 401) {
      localStorage.removeItem(keyName(roomId));
      return showJoin(roomId, "Your key no longer opens this room (the GM may have given you a " +
                              "new link, or removed you). Join again, or open your new link.");
    }
    $("room-title").textContent = err.message; return;
  }
  try { await loadSystems(); } catch (_) { /* examples are a nicety */ }
  state.room = me.room; state.member = me.member; state.key = key; state.sheet = me.sheet;
  state.signingKey = me.key; $("signing-key").textContent = (me.key || "").slice(0, 16) + "…";
  showFairness(me.fair);
  showTrust();
  $("end-epoch").hidden = me.member.role !== "gm";
  $("signing-key").title = me.key || "";
  state.backlog = me.head.id;  // entries up to here are history: not announced, not unread
  $("room").hidden = false;
  $("skip-to-roll").hidden = false;
  state.title = me.room.name + " · astragal";
  document.title = state.title;
  $("room-title").textContent = me.room.name;
  $("room-system").textContent = me.room.system;
  $("whoami").textContent = me.member.name + (me.member.role === "gm" ? " (GM)" : "");
  $("join-link").value = location.origin + "/r/" + me.room.id;
  // Your own link, with your key after '#' (never sent to the server): opens the room as you
  // on another device.
  $("gm-link-box").hidden = false;
  $("gm-link").value = location.origin + "/r/" + me.room.id + "#key=" + key;
  $("gm-link-what").textContent = me.member.role === "gm" ? "Your GM link" : "Your personal link";
  const examples = systemInfo(me.room.system).examples || [];
  $("roll-text").placeholder = examples.length ? "e.g. " + examples[0] : "what to roll";
  const list = $("roll-examples"); clear(list);
  for (const x of examples) list.append(el("option", { value: x }));
  renderQuick();
  showHead(me.head.hash);
  renderMembers(me.members);
  renderSheet();
  for (const id of ["share-panel", "table-panel", "sheet-panel", "turns-panel"]) $(id).open = wide.matches;
  $("fight-panel").open = wide.matches && me.room.system === "attack";
  renderTurns(); renderFight(); showVisibility();
  state.fit();
  connect();
  if (!phone.matches) $("roll-text").focus();
}

// A colour per member: hues a golden angle apart in joining order (well apart for a table's
// few people); someone no longer in the room keeps a colour from their id.
function hue(id) {
  const at = state.members.findIndex((m) => m.id === id);
  if (at >= 0) return Math.round((20 + at * 137.508) % 360);
  let h = 0;
  for (const c of String(id)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % 360;
}

// A list rebuilt while the keyboard is in it keeps the keyboard's place: the control that had
// the focus, found again by its name (``aria-label`` or its words) in the new list; when it is
// gone (a fighter or a member removed), the list's first control; none: the list itself
function keepingFocus(box, rebuild) {
  const had = document.activeElement;
  const inside = had && had !== box && box.contains(had);
  const name = (n) => n.tagName + "|" + (n.getAttribute("aria-label") || n.textContent);
  const key = inside ? name(had) : null;
  rebuild();
  if (!inside) return;
  const controls = [...box.querySelectorAll("button, select, input, a[href]")];
  const again = controls.find((n) => name(n) === key) || controls[0];
  if (again) again.focus();
  else { box.tabIndex = -1; box.focus(); }
}

function renderMembers(members) {
  keepingFocus($("members"), () => buildMembers(members));
}

function buildMembers(members) {
  state.members = members;
  const ul = $("members"); clear(ul);
  $("member-count").textContent = "(" + members.length + ")";
  const gm = state.member && state.member.role === "gm";
  for (const m of members) {
    const li = el("li", {}, el("span", { class: "who", style: "--hue:" + hue(m.id) }, m.name),
                  m.role === "gm" ? el("span", { class: "badge" }, "GM") : null);
    if (gm && m.role !== "gm") {
      li.append(el("button", { type: "button", class: "secondary", "aria-label": "new link for " + m.name,
                               onclick: () => reissue(m) }, "new link"),
                el("button", { type: "button", class: "secondary", "aria-label": "remove " + m.name,
                               onclick: () => removeMember(m) }, "remove"));
    }
    ul.append(li);
  }
}

async function reissue(m) {
  clear($("members-error"));
  if (!confirm("Give " + m.name + " a new link? Their old link and key stop working at once.")) return;
  try {
    const made = await api("POST", roomPath("/members/" + encodeURIComponent(m.id) + "/key"), {}, state.key);
    $("member-link-box").hidden = false;
    $("member-link-what").textContent = "New link for " + m.name + " (send it to them privately)";
    $("member-link").value = location.origin + made.link;
    $("member-link").select();
  } catch (err) { showError($("members-error"), err); }
}

async function removeMember(m) {
  clear($("members-error"));
  if (!confirm("Remove " + m.name + " from the room? Their rolls stay in the log.")) return;
  try { await api("DELETE", roomPath("/members/" + encodeURIComponent(m.id)), undefined, state.key); }
  catch (err) { showError($("members-error"), err); }
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
    if (at < 0) {
      const err = new Error(what + " line " + (i + 1) + ": write name = value");
      err.data = { text: line, span: [0, line.length] };
      throw err;
    }
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return out;
}

async function saveSheet() {
  clear($("sheet-error")); $("sheet-saved").textContent = "";
  try {
    const body = { stats: parseLines($("sheet-stats").value, "Character"),
                   macros: parseLines($("sheet-macros").value, "Macros") };
    state.sheet = await api("PUT", roomPath("/sheet"), body, state.key);
    renderSheet();
    $("sheet-saved").textContent = "saved";
  } catch (err) { showError($("sheet-error"), err); }
}

function roomPath(rest) { return "/api/rooms/" + encodeURIComponent(state.room.id) + rest; }

// ---------------------------------------------------------------------------------------------
// Live log: a ping that expects its pong, and plain words for the connection's state

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(proto + "//" + location.host + roomPath("/live"));
  state.ws = ws;
  let ping = null, pongDue = null;
  const hello = setTimeout(() => lineDown(ws), HELLO_WITHIN);  // a line that never opens
  ws.stop = () => { clearInterval(ping); clearTimeout(pongDue); clearTimeout(hello); };
  setLive("wait", state.everLive ? "reconnecting…" : "connecting…");
  ws.addEventListener("open", () => {
    ws.send(JSON.stringify({ key: state.key, after: state.last }));
    ping = setInterval(() => {
      if (ws.readyState !== 1) return;
      ws.send("ping");
      if (!pongDue) pongDue = setTimeout(() => lineDown(ws), PONG_WITHIN);  // no pong: the line is dead
    }, PING_EVERY);
  });
  ws.addEventListener("message", (ev) => {
    if (state.ws !== ws) return;  // a line given up on: a new one has the room
    const msg = JSON.parse(ev.data);
    if (msg.type === "hello") {
      clearTimeout(hello); setLive("on", "live"); state.retry = 500; state.everLive = true;
    }
    else if (msg.type === "pong") { clearTimeout(pongDue); pongDue = null; }
    // the live line resumes after what the live line itself brought, in order (never after an
    // entry the page has from elsewhere: a roll's own answer may be newer than one rolled
    // meanwhile at the table, which a new line starting after it would never send)
    else if (msg.type === "entry") { state.last = Math.max(state.last, msg.entry.id); addEntry(msg.entry); }
    else if (msg.type === "members") renderMembers(msg.members);
    else if (msg.type === "member") renderMembers([...state.members.filter((m) => m.id !== msg.member.id), msg.member]);
    else if (msg.type === "head") { state.last = Math.max(state.last, msg.id); showHead(msg.hash); }
    else if (msg.type === "error") { state.lastError = msg; }
  });
  ws.addEventListener("close", (ev) => {
    ws.stop();
    if (state.ws !== ws) return;
    if (ev.code === 4401) {
      setLive("off", "signed out");
      showError($("roll-error"), new Error("Your key no longer opens this room: the GM gave you " +
        "a new link or removed you. Open your new link, or reload to join again."));
      return;
    }
    if (ev.code === 4404 || ev.code === 4429) {
      setLive("off", "offline");
      showError($("roll-error"), new Error((state.lastError && state.lastError.message) || "disconnected"));
      return;
    }
    lineDown(ws);
  });
}

// The line is down: said at once, and a new one opened after a pause, whatever the browser's
// closing handshake does with the old one (over a stalled line Chromium waits a minute for it)
function lineDown(ws) {
  if (state.ws !== ws) return;
  state.ws = null;
  ws.stop();
  if (ws.readyState < 2) ws.close();
  setLive("wait", navigator.onLine === false ? "offline: waiting for the network…" : "reconnecting…");
  setTimeout(() => { if (!state.ws) connect(); }, state.retry);
  state.retry = Math.min(state.retry * 2, RETRY_MOST);
}

function setLive(kind, words) {
  const live = $("live");
  if (kind === "on" && $("roll-error").dataset.passing === "yes") clear($("roll-error"));
  live.hidden = false;
  live.textContent = words;
  live.className = "live " + kind;
  live.title = kind === "on" ? "connected: rolls arrive as they are made" : words;
}

const SEEN_BY = { public: "everyone", gm: "GM + roller", blind: "GM only" };

// Is the reader at the end of the log (so a new roll may scroll into view)?
function atEnd() {
  const log = $("log");
  if (phone.matches) {
    const bar = $("roll-form").offsetHeight;
    return log.getBoundingClientRect().bottom <= window.innerHeight - bar + 120;
  }
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function toEnd() {
  const log = $("log");
  if (phone.matches) { if (log.lastElementChild) log.lastElementChild.scrollIntoView({ block: "end" }); }
  else log.scrollTop = log.scrollHeight;
  state.fresh = 0;
  $("new-rolls").hidden = true;
}

function addEntry(entry) {
  keepReceipt(entry);
  if (entry.kind === "seed") showFairness({ epoch: entry.next, commitment: entry.next_commitment });
  if (state.seen.has(entry.id)) return;
  // the newest state wins: a command's own answer may come before an older entry's live copy
  if (entry.kind === "fight" && entry.id > state.fightAt) {
    state.fight = entry.state; state.fightAt = entry.id; state.fightBy = entry.member; renderFight();
  }
  if (entry.kind === "turns" && entry.id > state.turnsAt) { state.turns = entry.state; state.turnsAt = entry.id; renderTurns(); }
  if (entry.kind === "roll" || entry.kind === "reveal") queueLuck();
  if (entry.kind === "reveal") {
    state.revealed.add(entry.reveals);
    const old = state.seen.get(entry.reveals);
    if (old) old.querySelectorAll(".reveal-button").forEach((b) => b.remove());
  }
  const history = entry.id <= state.backlog;
  const follow = history || atEnd();
  const li = renderEntry(entry);
  state.seen.set(entry.id, li);
  if (entry.kind === "reveal") state.revealedBy.set(entry.reveals, li);
  if (state.luck) markLuck(entry.kind === "reveal" ? entry.reveals : entry.id);
  // entries arrive in order, but a roll's own response may race its live copy
  const log = $("log");
  let before = null;
  for (const node of log.children) { if (Number(node.dataset.id) > entry.id) { before = node; break; } }
  log.insertBefore(li, before);
  if (history) {  // the backlog: once at its end, no announcement, no unread count
    if (!state.endSoon) state.endSoon = requestAnimationFrame(() => { state.endSoon = 0; toEnd(); });
    return;
  }
  const mine = state.member && entry.member === state.member.id;
  if (follow || mine) toEnd();
  else { state.fresh += 1; const b = $("new-rolls"); b.hidden = false;
         b.textContent = "↓ " + state.fresh + " new " + (state.fresh === 1 ? "entry" : "entries"); }
  // every new entry is said once to a screen reader, one's own roll too ("You rolled …")
  $("announce").textContent = announceText(entry, mine);
  if (!mine && document.hidden) { state.unread += 1; document.title = "(" + state.unread + ") " + state.title; }
}

function announceText(e, mine) {
  if (e.kind === "roll") return (mine ? "You" : e.who) + " rolled " + e.text + ": " + (e.hidden ? "hidden" : (e.headline || e.verdict));
  if (e.kind === "reveal") return e.who + " revealed a hidden roll: " + ((e.of && (e.of.headline || e.of.verdict)) || "");
  if (e.kind === "seed") return e.who + " ended seed epoch " + e.epoch + ": its seed is revealed";
  return e.who + ": " + (e.message || e.text || "");
}

function showHead(hash) { $("head-hash").textContent = hash.slice(0, 16) + "…"; $("head-hash").title = hash; }

function whoOf(e) { return el("span", { class: "who", style: "--hue:" + hue(e.member || e.who) }, e.who); }

function entryHead(e, who, extra) {
  const time = new Date(e.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return el("div", { class: "entry-head" }, who,
    e.role === "gm" ? el("span", { class: "badge" }, "GM") : null, ...extra,
    el("time", { datetime: e.at, title: e.at }, time));
}

function renderSeed(e) {
  const head = entryHead(e, whoOf(e), [el("span", { class: "badge" }, "dice seed")]);
  return el("li", { class: "entry note tone-neutral", "data-id": e.id, "data-kind": "seed" }, head,
    el("div", { class: "verdict" }, "Seed epoch " + e.epoch + " ended: its seed is revealed, so every face " +
      "rolled in it can be checked (astragal verify-log). Epoch " + e.next + " begins, committed as " +
      String(e.next_commitment).slice(0, 16) + "…"));
}

function renderEntry(e) {
  if (e.kind === "reveal") return renderReveal(e);
  if (e.kind === "seed") return renderSeed(e);
  if (e.kind === "fight" || e.kind === "turns") return renderNote(e);
  const head = entryHead(e, whoOf(e), [
    el("code", { class: "text" }, e.text),
    e.notation && e.notation !== e.text ? el("span", { class: "hint" }, "→ " + e.notation) : null,
    e.visibility !== "public" ? el("span", { class: "vis vis-" + e.visibility }, SEEN_BY[e.visibility]) : null]);
  const tone = e.tone || "neutral";
  const li = el("li", { class: "entry tone-" + (e.hidden ? "neutral" : tone) + " outcome-" + (e.outcome || "hidden"),
                        "data-id": e.id, "data-visibility": e.visibility }, head);
  const tools = el("div", { class: "tools" });
  if (e.hidden) {
    li.append(el("div", { class: "verdict hidden-roll" }, "A blind roll: only the GM sees the result."));
  } else {
    const transcript = el("pre", { class: "transcript", hidden: true }, e.transcript_text);
    li.append(renderDice(e.roll, e.outcome),
              verdictLine(e.roll, tone, e.headline || e.verdict));
    tools.append(whyButton(transcript, e.who + "'s " + e.text),
      el("button", { type: "button", class: "link", "aria-label": "odds of " + e.text,
                     onclick: (ev) => showOdds(e.notation, e.system, true, ev.currentTarget) }, "odds"));
    li.append(tools, transcript);
    // again: seen by the same people as the entry, whatever the roll bar's choice is now
    const again = "roll " + e.text + " again, seen by " + (e.visibility === "gm" ? "the GM and you" : SEEN_BY[e.visibility]);
    tools.prepend(el("button", { type: "button", class: "link", "aria-label": again, title: again,
      onclick: () => roll(e.text, e.visibility) }, e.visibility === "public" ? "again" : "again (" + SEEN_BY[e.visibility] + ")"));
  }
  // the GM reveals any hidden roll, a player their own GM-only roll; a blind roll stays blind
  // to its roller until the GM reveals it (the server's powers: docs/web.md)
  const mayReveal = e.visibility !== "public" && state.member && !state.revealed.has(e.id) &&
    (state.member.role === "gm" || (e.member === state.member.id && e.visibility === "gm"));
  if (mayReveal) {
    tools.append(el("button", { type: "button", class: "link reveal-button",
      onclick: () => reveal(e.id) }, "reveal to all"));
    if (e.hidden) li.append(tools);
  }
  return li;
}

// The verdict, with a critical or a fumble among the dice that count said beside it (a natural 20)
function verdictLine(roll, tone, words) {
  const dice = ((roll && roll.dice) || []).filter((d) => d.kept !== false);
  const crit = dice.some((d) => d.crit || d.tone === "crit"), fumble = dice.some((d) => d.fumble || d.tone === "fumble");
  return el("div", { class: "verdict tone-" + tone }, words,
    crit ? el("span", { class: "nat crit" }, "★ critical") : fumble ? el("span", { class: "nat fumble" }, "fumble") : null);
}

function renderReveal(e) {
  const o = e.of || {};
  const who = el("span", { class: "who", style: "--hue:" + hue(e.member || e.who) }, e.who);
  const head = entryHead(e, who, [el("span", {}, "revealed " + (o.who || "") + "'s " +
    (o.visibility === "blind" ? "blind" : "GM + roller") + " roll #" + e.reveals + ":"),
    el("code", { class: "text" }, o.text || "")]);
  const tone = o.tone || "neutral";
  const transcript = el("pre", { class: "transcript", hidden: true }, o.transcript_text || "");
  return el("li", { class: "entry tone-" + tone, "data-id": e.id, "data-visibility": "public" }, head,
    o.roll ? renderDice(o.roll, o.outcome) : null,
    verdictLine(o.roll, tone, o.headline || o.verdict || ""),
    el("div", { class: "tools" }, whyButton(transcript, (o.who || "") + "'s " + (o.text || ""))), transcript);
}

// "why?": shows or hides an entry's transcript; shown, it is brought on screen (the last
// entry's opened under the phone's roll bar, or below the window)
function whyButton(transcript, what) {
  return el("button", { type: "button", class: "link", "aria-expanded": "false",
                        "aria-label": "why: " + what, onclick: (ev) => {
    transcript.hidden = !transcript.hidden;
    ev.target.setAttribute("aria-expanded", String(!transcript.hidden));
    if (!transcript.hidden) transcript.scrollIntoView({ block: "nearest" });
  } }, "why?");
}

function renderNote(e) {
  const who = el("span", { class: "who", style: "--hue:" + hue(e.member || e.who) }, e.who);
  const what = e.kind === "fight" ? "fight" : "turns";
  const head = entryHead(e, who, [el("span", { class: "badge" }, what), el("code", { class: "text" }, e.text)]);
  const tone = e.tone || "neutral";
  const li = el("li", { class: "entry note tone-" + tone, "data-id": e.id, "data-kind": e.kind }, head);
  if (e.roll) {
    li.append(renderDice(e.roll, e.outcome),
              verdictLine(e.roll, tone, e.headline || ""));
    const transcript = el("pre", { class: "transcript", hidden: true }, e.message);
    li.append(el("div", { class: "tools" }, whyButton(transcript)), transcript);
  } else {
    li.append(el("div", { class: "message" }, e.message));
  }
  return li;
}

// ---------------------------------------------------------------------------------------------
// Luck: each roll placed in its own exact odds, and each player's and the session's luck

function queueLuck() {  // after new rolls: one look at most every few seconds
  if (state.luckSoon) return;
  state.luckSoon = setTimeout(() => { state.luckSoon = 0; loadLuck(); }, 2500);
}

async function loadLuck() {
  if (!state.room || !state.key) return;
  clear($("luck-error"));
  try {
    state.luck = await api("GET", roomPath("/luck"), undefined, state.key);
  } catch (err) {
    $("luck-error").textContent = err.message;
    return;
  }
  renderLuck();
  for (const id of Object.keys(state.luck.entries)) markLuck(Number(id));
  if (state.luck.pending) queueLuck();
}

function luckPct(p) { return Math.round(100 * p) + "%"; }

function markLuck(id) {  // the roll's own line says where it fell
  const found = state.luck && state.luck.entries[String(id)];
  if (!found) return;
  for (const li of [state.seen.get(id), state.revealedBy.get(id)]) {
    if (!li || li.querySelector(".luck")) continue;
    const verdict = li.querySelector(".verdict");
    if (!verdict) continue;
    verdict.append(" ", "none" in found
      ? el("span", { class: "luck none", title: found.none }, "luck: —")
      : el("span", { class: "luck", title: "better than " + luckPct(found.percentile) +
                    " of rolls like it (mid-rank: ties count half)" }, "luck " + luckPct(found.percentile)));
  }
}

function luckRow(name, v) {
  const top = Math.max(1, ...v.histogram);
  const bars = el("span", { class: "luck-hist", "aria-hidden": "true" },
    ...v.histogram.map((h) => el("span", { style: "height:" + Math.round(100 * h / top) + "%" })));
  const said = v.rolls === 0 ? "no rolls placed yet"
    : v.rolls + (v.rolls === 1 ? " roll" : " rolls") + ", average " + luckPct(v.mean_percentile) +
      ", p = " + (v.p_value < 0.001 ? v.p_value.toExponential(1) : v.p_value.toFixed(3));
  const verdict = v.rolls === 0 ? "" : v.flagged ? "unlike fair dice" : "like fair dice";
  return el("li", { class: "luck-row" + (v.flagged ? " flagged" : "") },
    el("span", { class: "luck-name" }, name), bars, el("span", { class: "hint" }, said),
    verdict ? el("span", { class: "badge" + (v.flagged ? " warn" : "") }, verdict) : null);
}

function renderLuck() {
  const l = state.luck;
  $("luck-flag").textContent = String(l.flag_below);
  const rows = [luckRow("Everyone", l.session)];
  for (const [name, v] of Object.entries(l.members)) rows.push(luckRow(name, v));
  const body = $("luck-body");
  body.replaceChildren(el("ul", { class: "luck-rows" }, ...rows));
  if (l.pending) body.append(el("p", { class: "hint" }, l.pending + (l.pending === 1 ? " roll waits" : " rolls wait") +
    " for the table's time for odds: placed on a later look."));
}

// ---------------------------------------------------------------------------------------------
// Dice tiles, drawn from the roll's own record: every face in order, kept or not, and why

const GROUP_WORDS = { actor: "Actor", opposition: "Opposition", difficulty: "Difficulty",
                      pool: "Pool", attack: "Attack", luck: "Luck", defence: "Defence",
                      critical: "Critical" };

function groupLabel(g) {
  if (!g) return "";
  const m = g.match(/^(\w+) roll (\d+)$/);
  if (m) return (GROUP_WORDS[m[1]] || m[1]) + ", roll " + m[2];
  if (g.endsWith(" wild")) return (GROUP_WORDS[g.slice(0, -5)] || g.slice(0, -5)) + ": Wild Die";
  return GROUP_WORDS[g] || g;
}

// A die's facts are the rules' own (astragal.dice.Die): how its later faces go with its first
// (`joined`), why it is an extra die (`added`), what it counts where that is not its face
// (`scored`), its face's name (`label`) and how it reads (`tone`). The page draws them; it
// decides none of them.
const JOINED = { rerolled: { sep: "→", said: " re-rolled to " }, compounded: { sep: "+", said: " plus " },
                 exploded: { sep: "+", said: " then exploded: " }, penetrated: { sep: "+", said: " then penetrated: " } };
const ADDED = { exploded: ["✸", "added by an explosion"], penetrated: ["✸", "added by a penetrating explosion, counts one less"],
                check: ["?", "a check die, adds nothing"], wild: ["✸", "added by the Wild Die"], bonus: ["+", "added by a rule"] };

function facesOf(d) { return (d.faces && d.faces.length) ? d.faces : d.face ? [d.face] : []; }  // 0: never rolled

// What a die adds to its term: nothing when it is dropped; else what the rules scored, else its face
function worth(d) { return d.kept === false ? 0 : (d.scored ?? d.face); }

// The number a tile's faces show: the last of a re-roll, the sum of a chain (less 1 a step when it
// penetrates), the face; a die added by a penetrating explosion shows its −1
function shownValue(d, faces) {
  if (!faces.length) return 0;
  const sum = faces.reduce((a, b) => a + b, 0);
  if (d.joined === "compounded" || d.joined === "exploded") return sum;
  if (d.joined === "penetrated") return sum - (faces.length - 1);
  return faces[faces.length - 1] - (d.added === "penetrated" ? 1 : 0);
}

function dieTile(d) {
  const faces = facesOf(d);
  const kept = d.kept !== false;
  const join = JOINED[d.joined] || JOINED.rerolled;
  const face = el("span", { class: "face", "aria-hidden": "true" });
  if (d.label) face.append(d.label);
  else {
    faces.forEach((f, i) => {
      if (i > 0) face.append(el("span", { class: join.sep === "+" ? "plus" : "step" }, join.sep));
      if (i < faces.length - 1 && join === JOINED.rerolled) face.append(el("s", {}, String(f)));
      else face.append(String(f));
    });
    if (!faces.length) face.append("–");
  }
  if (d.added === "penetrated" || d.joined === "penetrated") face.append(el("span", { class: "less" }, "−1"));
  const cls = ["die"];
  const words = [(d.label ? "die" : "d" + d.size) + ": " + (d.label ? d.label : faces.length ? faces.map(String).join(join.said) : "not rolled")];
  const mark = ADDED[d.added];
  if (mark) { cls.push("added", "added-" + d.added); words.push(mark[1]); }
  if (!kept) { cls.push("dropped"); words.push(d.added === "check" ? "not counted" : "dropped, does not count"); }
  const value = shownValue(d, faces);
  let badge = null;
  if (kept && d.scored !== undefined && d.scored !== null && !d.label && d.scored !== value &&
      !(faces.length === 1 && (d.scored === 1 && d.tone === "good" || d.scored === 0 && !d.tone))) {
    badge = el("span", { class: "worth", "aria-hidden": "true" }, "⇒" + d.scored);
  }
  if (kept && d.scored !== undefined && d.scored !== null) words.push("counts " + d.scored);
  if (d.tone === "good") { cls.push("success"); words.push("success"); }
  else if (d.tone === "bad") { cls.push("failure"); words.push("counts against"); }
  if (d.crit || d.tone === "crit") { cls.push("crit"); words.push("critical"); }
  else if (d.fumble || d.tone === "fumble") { cls.push("fumble"); words.push("fumble"); }
  if (/ wild$/.test(d.group || "")) cls.push("wild");
  if (d.note) words.push(d.note);
  return el("span", { class: cls.join(" "), title: words.join("; "), "data-worth": String(worth(d)) },
    el("span", { class: "size", "aria-hidden": "true" }, (mark ? mark[0] + " " : "") + (d.label ? "" : "d" + d.size)),
    face, badge, el("span", { class: "sr-only" }, words.join(", ") + "."));
}

function renderDice(roll, outcome) {
  const box = el("div", { class: "dice" });
  const dice = (roll && roll.dice) || [];
  if (!dice.length) return box;
  const result = roll.result || {};
  if (outcome === "repeated" && Array.isArray(result.rolls) && result.rolls.length > 1) {
    return renderRepeats(box, dice, result);
  }
  const groups = [];
  for (const d of dice) {
    const name = d.group || "";
    let g = groups.find((x) => x.name === name);
    if (!g) { g = { name, dice: [] }; groups.push(g); }
    g.dice.push(d);
  }
  // a term written more than once (six `4d6kh3`): a row per term, labelled with what it came to
  const terms = Array.isArray(result.terms) ? result.terms : [];
  const rows = [];
  for (const g of groups) {
    const same = terms.filter((t) => t.term === g.name);
    if (same.length < 2) { rows.push({ name: g.name, term: same[0], dice: g.dice }); continue; }
    const at = splitByCount(g.dice, same.length);
    same.forEach((t, r) => rows.push({ name: g.name, term: t, dice: g.dice.filter((_, i) => at[i] === r) }));
  }
  const labelled = rows.length > 1;
  for (const g of rows) {
    const all = g.dice.every((d) => d.kept === false);
    const t = g.term;
    const label = groupLabel(g.name) + (t && t.label ? " [" + t.label + "]" : "") +
      (t && labelled && t.value !== undefined ? " = " + t.value : "");
    const row = el("div", { class: "dice-group" + (all && labelled ? " discarded" : ""), role: "group",
                            "aria-label": (label || "dice") + (all && labelled ? " (discarded)" : "") });
    if (labelled) row.append(el("span", { class: "glabel", "aria-hidden": "true" }, label));
    for (const d of g.dice) row.append(dieTile(d));
    box.append(row);
  }
  return box;
}

// `6x 4d6kh3`: one row per roll, each die in the row of the roll it belongs to (its `repeat`).
// Entries stored before the dice carried it are split by count.
function renderRepeats(box, dice, result) {
  const n = result.rolls.length;
  const rowOf = dice.every((d) => Number.isInteger(d.repeat) && d.repeat >= 1 && d.repeat <= n)
    ? dice.map((d) => d.repeat - 1) : splitByCount(dice, n);
  const reps = el("div", { class: "reps" });
  for (let r = 0; r < n; r++) {
    const row = el("div", { class: "rep", role: "group", "aria-label": "roll " + (r + 1) + " of " + n +
                            (result.totals ? ", total " + result.totals[r] : "") });
    row.append(el("span", { class: "rlabel", "aria-hidden": "true" }, "#" + (r + 1) +
               (result.totals ? " = " + result.totals[r] : "")));
    dice.forEach((d, i) => { if (rowOf[i] === r) row.append(dieTile(d)); });
    reps.append(row);
  }
  box.append(reps);
  return box;
}

// The dice of n alike terms (or rolls), in order: each has as many dice of its own, and the dice
// their explosions added (the record's `added`) follow their die
function splitByCount(dice, n) {
  const base = dice.filter((d) => !d.added).length;
  const per = base % n === 0 ? base / n : Math.ceil(dice.length / n);
  const rows = [];
  let r = 0, taken = 0;
  for (const d of dice) {
    if (!d.added) {
      if (taken === per && r < n - 1) { r += 1; taken = 0; }
      taken += 1;
    }
    rows.push(r);
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Rolling and odds

async function roll(text, visibility) {
  clear($("roll-error"));
  $("roll-text").removeAttribute("aria-invalid");
  if (text.length > MAX_ROLL) {
    if ($("roll-text").value === text) {  // the warning under the box says so: one message
      checkLength();
      $("roll-text").focus();
    } else {
      showError($("roll-error"), new Error("This roll is " + text.length + " characters; the table takes at most " +
                                           MAX_ROLL + ". Shorten it (nothing was rolled)."));
    }
    return false;
  }
  const button = $("roll-button");
  const focused = document.activeElement === button;  // a disabled button drops its focus
  button.disabled = true;
  button.textContent = "sending…";  // until the table has it (a slow or stalled line)
  $("roll-form").setAttribute("aria-busy", "true");
  // the roll is shown as pending until the table answers; it is sent once, never again by itself
  const pending = el("li", {}, el("code", {}, text), " sending… (not yet at the table)");
  $("pending").append(pending); $("pending").hidden = false;
  try {
    const sent = clientSeed(), shown = state.fair;
    const body = { text, visibility: visibility || $("roll-visibility").value, client_seed: sent };
    let entry;
    for (let tries = 1; ; tries++) {
      try { entry = await api("POST", roomPath("/rolls"), body, state.key); break; }
      catch (err) {
        // 503 Busy: the room's log took other rolls first and this one was not stored; try
        // again after a moment (twice), rather than asking the player to
        if (err.status !== 503 || err.data.error !== "Busy" || tries > 2) throw err;
        await new Promise((done) => setTimeout(done, 200 + Math.random() * 600));
      }
    }
    checkOwnRoll(entry, sent, shown);  // trust.js
    addEntry(entry);
    remember(text);
    return true;
  } catch (err) {
    showError($("roll-error"), err);
    $("roll-text").setAttribute("aria-invalid", "true");
    return false;
  }
  finally {
    button.disabled = false; showVisibility(); $("roll-form").removeAttribute("aria-busy");
    pending.remove(); $("pending").hidden = !$("pending").children.length;
    if (focused) button.focus();
  }
}

async function reveal(id) {
  clear($("roll-error"));
  try { addEntry(await api("POST", roomPath("/rolls/" + id + "/reveal"), {}, state.key)); }
  catch (err) { showError($("roll-error"), err); }
}

function pct(p) { return (100 * p).toFixed(p > 0 && p < 0.001 ? 4 : 2) + "%"; }

async function showOdds(text, system, exact, opener) {
  clear($("roll-error"));
  state.oddsOpener = opener || document.activeElement;
  let odds;
  try {
    odds = exact
      ? await api("GET", "/api/odds?text=" + encodeURIComponent(text) + "&system=" + encodeURIComponent(system || ""))
      : await api("GET", roomPath("/odds?text=" + encodeURIComponent(text)), undefined, state.key);
  } catch (err) { showError($("roll-error"), err); return; }
  $("odds-panel").hidden = false;
  $("odds-of").textContent = odds.notation;
  renderOdds($("odds-view"), odds);
  const panel = $("odds-panel"), r = panel.getBoundingClientRect();
  if (r.top < 0 || r.top > innerHeight * 0.5) panel.scrollIntoView({ block: "start" });
}

// The odds in a few words, for a screen reader: the outcomes, or the mean of the value
function oddsSaid(odds) {
  const said = odds.outcome_rows.length
    ? odds.outcome_rows.map(([, name, p]) => name + " " + pct(p)).join(", ")
    : (odds.odds.mean !== undefined && odds.odds.mean !== null ? "mean " + Number(odds.odds.mean).toFixed(2) : "");
  return "Odds of " + odds.notation + (said ? ": " + said : "");
}

function closeOdds() {
  $("odds-panel").hidden = true;
  const back = state.oddsOpener;
  state.oddsOpener = null;
  if (back && back.isConnected && !back.disabled) back.focus();
  else $("roll-text").focus();
}

// The odds of a roll (the web API's odds page) drawn into ``root``: outcome bars, a chart of the
// values, their table and the text, said in a few words to a screen reader; one view for the
// room's panel and the home page's quick odds
function renderOdds(root, odds) {
  $("announce").textContent = oddsSaid(odds);
  const opened = root.querySelector("details")?.open;  // "as text", as the player left it
  clear(root);
  root.append($("odds-view-template").content.cloneNode(true));
  const part = (name) => root.querySelector("." + name);
  root.querySelector("details").open = !!opened;
  const bars = part("odds-outcomes");
  for (const [k, name, p] of odds.outcome_rows) {
    const fill = el("span", { class: "fill tone-" + ((odds.tones && odds.tones[k]) || "neutral") + " outcome-" + k });
    fill.style.width = (100 * p).toFixed(2) + "%";
    bars.append(el("div", { class: "bar-row" }, el("span", { class: "label" }, name),
                   el("span", { class: "bar" }, fill), el("span", { class: "num" }, pct(p))));
  }
  // the far tails of a long law (explosions) are folded, as in the text (the server says where)
  const [lo, hi] = odds.shown || [0, odds.value_rows.length];
  const rows = odds.value_rows.slice(lo, hi), folded = odds.value_rows.length - rows.length;
  const chart = part("odds-chart");
  const top = Math.max(...rows.map((r) => r[1]), 1e-12);
  for (const [v, p] of rows) {
    const col = el("span", { class: "col", title: v + ": " + pct(p) });
    col.style.height = (100 * p / top).toFixed(1) + "%";
    chart.append(col);
  }
  const table = part("odds-table");
  table.append(el("tr", {}, el("th", {}, odds.value_name || "value"), el("th", {}, "P(=)"),
                  el("th", {}, "P(≥)"), el("th", {}, "P(≤)")));
  for (const [v, p, atLeast, atMost] of rows) {
    table.append(el("tr", {}, el("td", {}, v), el("td", {}, pct(p)), el("td", {}, pct(atLeast)),
                    el("td", {}, pct(atMost))));
  }
  part("odds-folded").hidden = !folded;
  part("odds-folded").textContent = folded ? folded + " values at the ends, each below 0.0005%, " +
    "not shown (from " + odds.value_rows[0][0] + " to " + odds.value_rows[odds.value_rows.length - 1][0] +
    " in all)" : "";
  part("odds-text").textContent = odds.odds_text;
}

async function download(kind) {
  try {
    const res = await fetch(roomPath("/export." + kind), { headers: { Authorization: "Bearer " + state.key } });
    if (!res.ok) throw new Error("the export failed (HTTP " + res.status + ")");
    const blob = await res.blob();
    const a = el("a", { href: URL.createObjectURL(blob), download: "astragal-" + state.room.id + "." + kind });
    document.body.append(a); a.click(); a.remove();
  } catch (err) {
    showError($("members-error"), err.message.startsWith("the export") ? err :
      new Error("The table's server cannot be reached: try again."));
  }
}

// ---------------------------------------------------------------------------------------------
// The roll bar: history per room on this device, quick buttons, who sees the next roll

function past() {
  try { return JSON.parse(localStorage.getItem(historyName(state.room.id)) || "[]"); } catch (_) { return []; }
}

function remember(text) {
  const list = past().filter((t) => t !== text);
  list.push(text);
  localStorage.setItem(historyName(state.room.id), JSON.stringify(list.slice(-50)));
  state.back = 0;
}

function setRollText(text) {
  const input = $("roll-text");
  input.value = text;
  checkLength();
  input.focus();
}

// Advantage and disadvantage (general notation): the first d20 becomes two, keep one.
// A name as a command's word: in double quotes when it holds a space ("Big Troll").
function quoted(name) { return /\s/.test(name) ? '"' + name + '"' : name; }

function d20Twice(text, keep) {
  const t = text.trim() || "d20";
  const re = /(^|[^\dA-Za-z])(?:1|2)?d20(?:k[hl]1)?(?!\d)/i;
  if (re.test(t)) return t.replace(re, (m, pre) => pre + "2d20" + keep);
  // no d20 to roll twice: a d20 with advantage, then what was typed (+5 as it is, d200+1 added)
  return "2d20" + keep + (/^[+-]/.test(t) ? " " : " + ") + t;
}

// Jadeclaw: one more Bonus (+Nb) or Penalty (-Np) on the actor's side (before 'vs').
function jadeclawStep(text, letter) {
  const t = text.trim();
  const at = t.search(/\svs\s/i);
  const actor = at < 0 ? t : t.slice(0, at), rest = at < 0 ? "" : t.slice(at);
  const sign = letter === "b" ? "+" : "-";
  const m = actor.match(new RegExp("(^|\\s)[+-]?(\\d*)" + letter + "(?=\\s|$)"));
  const next = m ? actor.replace(m[0], m[1] + sign + (Number(m[2] || 1) + 1) + letter)
                 : actor + (actor ? " " : "") + sign + "1" + letter;
  return next + rest;
}

function renderQuick() {
  const box = $("quick"); clear(box);
  const sys = state.room.system;
  const quick = (label, title, f) => box.append(el("button", { type: "button", class: "chip", title,
    "aria-label": label + " (" + title + ")", onclick: () => setRollText(f($("roll-text").value)) }, label));
  if (sys === "dice") {
    quick("adv", "advantage: roll the d20 twice, keep the higher", (t) => d20Twice(t, "kh1"));
    quick("dis", "disadvantage: roll the d20 twice, keep the lower", (t) => d20Twice(t, "kl1"));
  } else if (sys === "jadeclaw") {
    quick("+1 Bonus", "one more Bonus on your side (+1b)", (t) => jadeclawStep(t, "b"));
    quick("+1 Penalty", "one more Penalty on your side (-1p)", (t) => jadeclawStep(t, "p"));
  }
}

function showVisibility() {
  const v = $("roll-visibility").value;
  const form = $("roll-form");
  form.classList.toggle("vis-gm", v === "gm");
  form.classList.toggle("vis-blind", v === "blind");
  $("roll-button").textContent = v === "public" ? "Roll" : v === "gm" ? "Roll (GM + me)" : "Roll blind";
  const note = $("roll-note");
  note.hidden = v === "public";
  note.textContent = v === "gm" ? "The next roll is seen by the GM and you only."
    : v === "blind" ? "The next roll is blind: only the GM sees the result, not even you." : "";
}

function checkLength() {
  if ($("roll-error").dataset.passing === "yes") clear($("roll-error"));
  if (!$("roll-error").textContent) $("roll-text").removeAttribute("aria-invalid");
  const n = $("roll-text").value.length;
  const w = $("roll-warning");
  w.hidden = n <= MAX_ROLL;
  w.textContent = n > MAX_ROLL ? "This is " + n + " characters; the table takes at most " + MAX_ROLL +
    ". Nothing is cut: shorten it before rolling." : "";
}

// ---------------------------------------------------------------------------------------------
// Turn order (any game) and the fight tracker (attack table)

async function command(path, text, errorBox) {
  clear(errorBox);
  try { addEntry(await api("POST", roomPath(path), { text }, state.key)); return true; }
  catch (err) { showError(errorBox, err); return false; }
}

function renderTurns() {
  keepingFocus($("turns"), buildTurns);
}

function buildTurns() {
  const t = state.turns || { order: [], current: 0, round: 1 };
  const ol = $("turns"); clear(ol);
  // the server's powers (docs/web.md): a name is removed by the GM or whoever added it, the
  // order cleared by the GM; the buttons show only where they would work
  const gm = state.member && state.member.role === "gm";
  const mine = (x) => gm || (state.member && x.by === state.member.id);
  t.order.forEach((x, i) => {
    const now = t.started && i === t.current;
    ol.append(el("li", { class: now ? "current" : "", "aria-current": now ? "step" : null },
      el("span", {}, x.name), el("span", { class: "init" }, String(x.init)),
      mine(x) ? el("button", { type: "button", class: "link", "aria-label": "remove " + x.name + " from the turn order",
                     onclick: () => command("/turns", "remove " + quoted(x.name), $("turns-error")) }, "×") : null));
  });
  $("turns-round").textContent = t.order.length && t.started ? "(round " + t.round + ")" : "";
  $("turns-clear").hidden = !t.order.length || !gm;
  const now = $("turn-now");
  now.hidden = !t.order.length;
  now.textContent = !t.order.length ? "" : t.started
    ? "Round " + t.round + ": " + t.order[t.current].name + "'s turn"
    : "Turn order ready: " + t.order[0].name + " goes first; Next turn starts the first round";
}

function renderFight() {
  keepingFocus($("fighters"), buildFight);
  placeFight();
}

// A fight in play (an attack room, or fighters added) brings its tracker to the top of the side
// column, beside the log on a desktop (as Roll20 and Foundry keep theirs beside the chat);
// narrower, where the side column is below the log, the roll bar's Fight button goes to it
function placeFight() {
  const panel = $("fight-panel"), top = $("odds-panel").nextElementSibling;
  const inPlay = (state.room && state.room.system === "attack") || !!(state.fight && state.fight.combatants.length);
  $("to-fight").hidden = !inPlay;
  if (!inPlay || top === panel) return;
  const focused = panel.contains(document.activeElement) ? document.activeElement : null;
  panel.parentNode.insertBefore(panel, top);
  if (focused) focused.focus();  // a moved node loses the focus
  if (wide.matches) panel.open = true;
}

function isDown(c) { return c.hp !== null && c.hp !== undefined && c.damage >= c.hp; }

// Whom an attack aims at unless the player picks: the one picked last in this row while they
// stand; else the first standing fighter of another side (the side the GM gave, side=…), then
// one of no known side, then an ally; the fallen last
function aimOf(c, others) {
  const picked = others.find((o) => o.name === state.aims.get(c.name));
  if (picked && !isDown(picked)) return picked.name;
  const side = (o) => (o.side || "").toLowerCase();
  const rank = (o) => (isDown(o) ? 3 : 0) + (!side(c) || !side(o) ? 1 : side(o) === side(c) ? 2 : 0);
  const best = [...others].sort((a, b) => rank(a) - rank(b))[0];  // a stable sort: the first of each rank
  return best && best.name;
}

function buildFight() {
  const f = state.fight || { combatants: [] };
  const table = $("fighters"); clear(table);
  // the last attack may be taken back by whoever made it, or the GM, until the next command
  const undo = $("fight-undo");
  undo.hidden = !(f.undo && state.member && (state.member.role === "gm" || state.fightBy === state.member.id));
  undo.textContent = f.undo ? "undo " + f.undo.attack : "";
  if (!f.combatants.length) {
    table.append(el("tr", {}, el("td", {}, "No fighters yet" + (state.member && state.member.role === "gm"
      ? ": add them with the command below." : ": the GM adds them."))));
    return;
  }
  const heads = ["Fighter", "ATK/WPN", "Defence", "Luck", "Heal", "Ammo", "Damage", "State", ""];
  table.append(el("tr", { class: "head" }, ...heads.map((h) => el("th", { scope: "col" }, h))));
  // on a phone each fighter is a card: every cell says what it is (CSS shows data-label)
  const cell = (i, text, cls) => el("td", { "data-label": heads[i], class: cls || "" }, ...[].concat(text));
  for (const c of f.combatants) {
    const down = isDown(c);
    const stateWords = [down ? "down" : null, c.stunned ? "stunned" : null,
                        ...(c.last_turn || []).map((x) => x === "whiffed" ? "whiffed last turn" : x + " last turn")].filter(Boolean);
    const others = f.combatants.filter((o) => o.name !== c.name);
    const aim = aimOf(c, others);
    const target = el("select", { "aria-label": c.name + " attacks whom",
                                  onchange: () => state.aims.set(c.name, target.value) },
      ...others.map((o) => el("option", { value: o.name, selected: o.name === aim }, o.name)));
    const stance = el("select", { "aria-label": c.name + "'s stance" },
      el("option", { value: "" }, "normal"), el("option", { value: "berserk" }, "berserk"),
      el("option", { value: "defensive" }, "defensive"));
    const actions = el("div", { class: "fighter-actions" }, target, stance,
      el("button", { type: "button", "aria-label": "attack: " + c.name, onclick: () => command("/fight", ["attack", quoted(c.name), quoted(target.value), stance.value].filter(Boolean).join(" "), $("fight-error")) }, "attack"),
      el("button", { type: "button", class: "secondary", "aria-label": "pass: " + c.name, onclick: () => command("/fight", "pass " + quoted(c.name), $("fight-error")) }, "pass"),
      c.heal > 0 && c.damage > 0 ? el("button", { type: "button", class: "secondary", "aria-label": "heal: " + c.name,
        onclick: () => command("/fight", "heal " + quoted(c.name), $("fight-error")) }, "heal") : null);
    if (f.combatants.length < 2) { target.disabled = true; }
    table.append(el("tr", { "data-name": c.name },
      cell(0, [c.name, c.side ? el("span", { class: "badge" }, c.side) : null], "name"),
      cell(1, c.attack + "/" + c.weapon + (c.class ? " " + c.class : "")),
      cell(2, "A" + c.armor + " S" + c.shield + " P" + c.parry),
      cell(3, String(c.luck)), cell(4, String(c.heal)),
      cell(5, c.ammo === null || c.ammo === undefined ? "–" : String(c.ammo)),
      cell(6, c.damage + (c.hp !== null && c.hp !== undefined ? "/" + c.hp : ""), down ? "down" : ""),
      cell(7, stateWords.join(", ") || "–", "state"),
      cell(8, actions, "actions")));
  }
}

// ---------------------------------------------------------------------------------------------
// Start

function wire() {
  applyTheme();
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", applyTheme);
  $("theme-toggle").addEventListener("click", toggleTheme);
  $("fight-undo").addEventListener("click", () => command("/fight", "undo", $("fight-error")));
  $("to-fight").addEventListener("click", () => {
    const panel = $("fight-panel");
    panel.open = true;
    panel.scrollIntoView({ block: "start" });
    panel.querySelector("summary").focus({ preventScroll: true });
  });
  $("roll-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("roll-text").value;
    if (await roll(text) && $("roll-text").value === text) { $("roll-text").value = ""; checkLength(); }
  });
  $("roll-text").addEventListener("keydown", (ev) => {
    if (ev.key !== "ArrowUp" && ev.key !== "ArrowDown") return;
    const list = past();
    if (!list.length) return;
    state.back = state.back || 0;
    if (ev.key === "ArrowUp") state.back = Math.min(state.back + 1, list.length);
    else state.back = Math.max(state.back - 1, 0);
    $("roll-text").value = state.back ? list[list.length - state.back] : "";
    ev.preventDefault();
  });
  $("roll-text").addEventListener("input", checkLength);
  $("roll-visibility").addEventListener("change", showVisibility);
  $("odds-button").addEventListener("click", () => showOdds($("roll-text").value, null, false));
  $("odds-close").addEventListener("click", closeOdds);
  document.addEventListener("keydown", (ev) => {  // Escape closes the odds panel
    if (ev.key === "Escape" && !$("odds-panel").hidden) { ev.preventDefault(); closeOdds(); }
  });
  $("luck-refresh").addEventListener("click", () => loadLuck());
  $("luck-panel").addEventListener("toggle", () => { if ($("luck-panel").open) loadLuck(); });
  $("save-sheet").addEventListener("click", saveSheet);
  $("copy-join").addEventListener("click", async () => {
    const input = $("join-link");
    const button = $("copy-join");
    input.select();  // without the clipboard (plain http), the link is selected to copy by hand
    try { await navigator.clipboard.writeText(input.value); button.textContent = "Copied"; }
    catch (_) { button.textContent = "Selected"; }
    button.focus();  // select() moved the focus to the link
    $("announce").textContent = button.textContent === "Copied" ? "The join link is copied"
      : "The join link is selected: copy it with your keyboard";
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  });
  $("export-json").addEventListener("click", () => download("json"));
  $("export-receipts").addEventListener("click", downloadReceipts);
  $("end-epoch").addEventListener("click", endEpoch);
  $("client-seed").addEventListener("change", setClientSeed);
  $("export-md").addEventListener("click", () => download("md"));
  $("skip-to-roll").addEventListener("click", (ev) => { ev.preventDefault(); $("roll-text").focus(); });
  $("new-rolls").addEventListener("click", () => {  // the button goes: the keyboard goes to the log
    toEnd();
    $("log").focus({ preventScroll: true });
  });
  $("log").addEventListener("scroll", () => { if (atEnd()) { state.fresh = 0; $("new-rolls").hidden = true; } });
  window.addEventListener("scroll", () => { if (phone.matches && state.fresh && atEnd()) toEnd(); }, { passive: true });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) { state.unread = 0; document.title = state.title; }
  });
  $("turns-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const name = $("turns-name").value.trim();
    const text = ("add " + (name ? quoted(name) : "") + " " + $("turns-init").value.trim()).trim();
    const init = $("turns-init").value;
    // cleared when added, unless a next name was typed meanwhile (as the fight form does)
    if (await command("/turns", text, $("turns-error")) && $("turns-name").value.trim() === name) {
      $("turns-name").value = ""; if ($("turns-init").value === init) $("turns-init").value = "";
      $("turns-name").focus();  // the next name, not the initiative box
    }
  });
  // a press names the turn it ends: two presses at once (or two people's) advance one turn
  $("turns-next").addEventListener("click", () => {
    const t = state.turns;
    const ends = t && t.started && t.order[t.current] ? " " + t.round + " " + quoted(t.order[t.current].name) : " start";
    command("/turns", "next" + ends, $("turns-error"));
  });
  $("turns-clear").addEventListener("click", () => {
    if (confirm("Clear the turn order for everyone at the table?")) command("/turns", "clear", $("turns-error"));
  });
  $("fight-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("fight-text").value;
    if (await command("/fight", text, $("fight-error")) && $("fight-text").value === text) $("fight-text").value = "";
  });
  // On phones the roll bar is fixed at the bottom: keep the page's end clear of it.
  const bar = $("roll-form");
  let shown = 0;
  const fit = () => {
    const h = phone.matches && !$("room").hidden ? bar.offsetHeight : 0;
    const grew = h > shown;
    shown = h;
    document.body.style.paddingBottom = h ? h + 8 + "px" : "";
    document.documentElement.style.setProperty("--bar-height", h + "px");
    // the bar grew (an error, a warning, more macros): the newest entry stays above it
    if (grew && h && state.room && atEnd()) toEnd();
  };
  if (window.ResizeObserver) new ResizeObserver(fit).observe(bar);
  phone.addEventListener("change", fit);
  window.addEventListener("resize", fit);
  state.fit = fit;
}

// A personal link's key (``#key=…``, never sent to the server) is kept on this device for its
// room, and leaves the address bar; true when the address held one
function keyFromLink(roomId) {
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("key");
  if (!fromLink) return false;
  localStorage.setItem(keyName(roomId), fromLink);
  history.replaceState(null, "", location.pathname);
  return true;
}

async function start() {
  wire();
  const m = location.pathname.match(/^\/r\/([A-Za-z0-9_-]{1,64})$/);
  if (!m) return showHome();
  const roomId = m[1];
  keyFromLink(roomId);
  // another personal link opened in this tab changes only the address's '#': the room opens
  // again with its key
  window.addEventListener("hashchange", () => { if (keyFromLink(roomId)) location.reload(); });
  const key = localStorage.getItem(keyName(roomId));
  if (key) return enterRoom(roomId, key);
  return showJoin(roomId);
}

start();
