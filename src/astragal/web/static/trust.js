"use strict";
// Trusting the dice and the log, on the page's side (docs/trust.md): the receipts this device
// keeps, its client seed, the seed commitment shown before a roll, and checking its own rolls.

// Receipts: every signed entry this page has seen, kept on the device per room. Anyone can later
// check the room's log against them (verify.html, astragal verify-log --receipts): a log cut
// shorter or rewritten after the fact no longer matches what the players were shown. A receipt
// of this page's own roll also names the client seed it sent and the commitment it showed.
function receiptsName(roomId) { return "astragal:receipts:" + roomId; }

function loadReceipts() {
  try { return JSON.parse(localStorage.getItem(receiptsName(state.room.id)) || "[]"); } catch (_) { return []; }
}

function keepReceipt(entry, extra) {
  if (!entry.sig || !entry.hash || !state.room) return;
  const kept = loadReceipts();
  let at = kept.length - 1;
  while (at >= 0 && kept[at].id > entry.id) at--;
  if (at >= 0 && kept[at].id === entry.id) {
    if (!extra) return;
    Object.assign(kept[at], extra);
  } else if (at === kept.length - 1) {
    kept.push(Object.assign({ id: entry.id, hash: entry.hash, sig: entry.sig }, extra || {}));
  } else return;  // older than what this page has kept, and not kept then: not seen live
  try { localStorage.setItem(receiptsName(state.room.id), JSON.stringify(kept.slice(-20000))); } catch (_) { /* full */ }
}

function downloadReceipts() {
  const file = { format: "astragal-receipts/1", room: state.room.id, key: state.signingKey,
                 member: state.member.name, receipts: loadReceipts() };
  const blob = new Blob([JSON.stringify(file)], { type: "application/json" });
  const a = el("a", { href: URL.createObjectURL(blob), download: "astragal-" + state.room.id + "-receipts.json" });
  document.body.append(a); a.click(); a.remove();
}

// This device's client seed for the room: the faces follow from it and the room's committed
// seed. The page makes a random one; the member may type their own (printable ASCII, ≤ 64).
const CLIENT_SEED = /^[\x20-\x7e]{1,64}$/;
function clientSeedName() { return "astragal:client-seed:" + state.room.id; }

function clientSeed() {
  let seed = localStorage.getItem(clientSeedName());
  if (!seed || !CLIENT_SEED.test(seed)) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    seed = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(clientSeedName(), seed);
  }
  return seed;
}

function setClientSeed() {
  const input = $("client-seed"), text = input.value;
  clear($("client-seed-error"));
  if (text === "") localStorage.removeItem(clientSeedName());  // a new random one
  else if (!CLIENT_SEED.test(text)) {
    showError($("client-seed-error"), new Error("A client seed is 1 to 64 printable ASCII characters (letters, digits, punctuation, spaces); kept: " + clientSeed()));
    input.value = clientSeed();
    return;
  } else localStorage.setItem(clientSeedName(), text);
  input.value = clientSeed();
}

function showFairness(fair) {
  if (!fair) return;
  state.fair = fair;
  $("seed-epoch").textContent = String(fair.epoch);
  $("seed-commitment").textContent = fair.commitment.slice(0, 16) + "…";
  $("seed-commitment").title = fair.commitment;
}

function showTrust() {
  $("client-seed").value = clientSeed();
  $("verify-link").href = "/verify?room=" + encodeURIComponent(state.room.id) + "&key=" + encodeURIComponent(state.signingKey || "");
}

async function endEpoch() {
  try {
    const entry = await api("POST", roomPath("/epoch"), {}, state.key);
    showFairness({ epoch: entry.next, commitment: entry.next_commitment });
  } catch (err) {
    showError($("members-error"), err);
  }
}

// This page's own roll: it must carry the client seed the page sent and, in the epoch the page
// showed, the commitment it showed. Kept in the receipt either way; said at once if not. A roll
// that comes back without its fair record, once this page has had one with it, is said too (its
// faces would be the table's choice): its receipt names the client seed, so the check refuses it.
function checkOwnRoll(entry, sent, shown) {
  const extra = { client: sent };
  if (entry.fair && shown && entry.fair.epoch === shown.epoch) extra.commitment = shown.commitment;
  keepReceipt(entry, extra);
  const wrong = [];
  if (!entry.fair) {
    if (state.seeded) wrong.push("no fair record (its faces do not come from the committed seed)");
  } else if (entry.fair.client !== sent) wrong.push("another client seed than this page sent");
  if (entry.fair) state.seeded = true;
  if (extra.commitment && entry.fair.commitment !== extra.commitment) wrong.push("another seed commitment than this page showed");
  if (wrong.length) {
    showError($("roll-error"), new Error("Warning: the table rolled #" + entry.id + " with " + wrong.join(" and ") +
      ". Your receipts record it: keep them, and check the log (Check the log, or astragal verify-log --receipts)."));
  }
}
