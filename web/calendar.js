// The challenge calendar: from a week back to a week ahead (as far as commitments are published,
// GET /v1/challenges), each day's challenge per rule set with its commitment and when it was made; after the close
// its code and nonce, and "Verify", which checks the proof on the player's own device: SHA-256 over the ASCII bytes
// `<code>:<nonce>` (crypto.subtle) against the commitment published before the day. No server's word is taken for it.

import * as state from "./state.js";
import { $ } from "./render.js";
import { locale, t } from "./texts.js";
import { showChallenge } from "./dialogs.js";
import { playAgain, problemText, tell, when } from "./views.js";

const DAY_MS = 24 * 3600 * 1000;
const SPAN_DAYS = 7;

/** A UTC day, ``days`` from today, as the API writes it (YYYY-MM-DD). */
function dayFromToday(days) {
  return new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);
}

/** A challenge's UTC day in the page's language, weekday included. */
function dayName(iso) {
  const format = new Intl.DateTimeFormat(locale() === "hu" ? "hu-HU" : "en-GB", {
    weekday: "short", year: "numeric", month: "short", day: "numeric", timeZone: "UTC",
  });
  return format.format(new Date(iso));
}

/** A rule set's name from the catalogue, else its segment (the id's last part). */
function presetName(id) {
  const segment = id.slice(11);
  const preset = (state.snapshot().catalogue?.presets || []).find((p) => p.segment === segment);
  return preset ? `${preset.name} (${segment})` : segment;
}

/** The hex SHA-256 of ``text``'s bytes, computed by this browser. */
export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function button(text, action, name) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = text;
  element.dataset.action = name;
  element.addEventListener("click", action);
  return element;
}

/** A long hex value shortened on screen; the whole of it one click away, to select or copy. */
function longValue(value, kind) {
  const details = document.createElement("details");
  details.className = "long-value";
  details.dataset.kind = kind;
  const summary = document.createElement("summary");
  const short = `${value.slice(0, kind === "code" ? 12 : 8)}…${value.slice(-4)}`;
  summary.textContent = short;
  summary.setAttribute("aria-label", t(`${kind}Show`, short));
  const full = document.createElement("code");
  full.textContent = value;
  full.dataset.full = kind;
  details.append(summary, full);
  return details;
}

function cell(...content) {
  const element = document.createElement("td");
  element.append(...content);
  return element;
}

/** Whether ``entry``'s proof opens its commitment, said in its row and on the view's message line. */
async function verify(entry, result) {
  const computed = await sha256Hex(`${entry.code}:${entry.nonce}`);
  const matches = computed === entry.commitment.toLowerCase();
  const late = matches && entry.committed_at && new Date(entry.committed_at) >= new Date(entry.opens_at);
  const published = when(entry.committed_at);
  let sentence = matches ? t("proofMatches", published) : t("proofMismatch", published, `${computed.slice(0, 12)}…`);
  if (late) sentence = `${sentence} ${t("proofLate")}`;
  result.textContent = sentence;
  result.dataset.verified = matches ? (late ? "late" : "match") : "mismatch";
  result.classList.toggle("error", !matches || Boolean(late));
  tell("calendar-message", `${entry.id}: ${sentence}`, !matches);
}

function playChallenge(entry) {
  $("calendar-dialog").close();
  $("challenge-preset").value = entry.id.slice(11);
  showChallenge();
}

function playDeal(code) {
  $("calendar-dialog").close();
  playAgain(code);
}

function actions(entry, result) {
  const list = [];
  if (entry.code && entry.nonce && entry.commitment) list.push(button(t("verify"), () => verify(entry, result), "verify"));
  if (entry.code) list.push(button(t("playThisDeal"), () => playDeal(entry.code), "play-deal"));
  if (entry.open) list.push(button(t("playToday"), () => playChallenge(entry), "play-today"));
  return list;
}

function proof(entry) {
  if (!entry.code || !entry.nonce) return [cell(entry.open ? t("openNow") : t("sealed")), cell("")];
  return [cell(longValue(entry.code, "code")), cell(longValue(entry.nonce, "nonce"))];
}

/** One challenge's row: its day (the row's header), rule set, commitment, when committed, code, nonce, actions. */
function row(entry) {
  const line = document.createElement("tr");
  line.dataset.challenge = entry.id;
  line.dataset.state = entry.code ? "closed" : entry.open ? "open" : "coming";
  const day = document.createElement("th");
  day.scope = "row";
  day.textContent = dayName(entry.opens_at);
  const result = document.createElement("p");
  result.className = "proof-result";
  const commitment = entry.commitment ? longValue(entry.commitment, "commitment") : "—";
  const committed = entry.committed_at ? when(entry.committed_at) : "—";
  line.append(day, cell(presetName(entry.id)), cell(commitment), cell(committed), ...proof(entry));
  line.append(cell(...actions(entry, result), result));
  return line;
}

function empty() {
  const line = document.createElement("tr");
  const only = document.createElement("td");
  only.colSpan = 7;
  only.textContent = t("noCommitments");
  line.append(only);
  return line;
}

/** Every page of the calendar from ``first`` to ``last`` (the API answers at most 31 days a page). */
async function entries(first, last) {
  const found = [];
  let from = first;
  for (let pages = 0; from && pages < 3; pages++) {
    const { data } = await state.call("GET", `/v1/challenges?from=${from}&to=${last}`);
    found.push(...data.challenges);
    from = data.next_from;
  }
  return found;
}

/** Opens the calendar, a week back to a week ahead. */
export async function showCalendar() {
  tell("calendar-message", "");
  try {
    const found = await entries(dayFromToday(-SPAN_DAYS), dayFromToday(SPAN_DAYS));
    $("calendar-entries").replaceChildren(...(found.length ? found.map(row) : [empty()]));
  } catch (error) {
    $("calendar-entries").replaceChildren(empty());
    tell("calendar-message", problemText(error), true);
  }
  if (!$("calendar-dialog").open) $("calendar-dialog").showModal();
}

/** Wires the header's button. */
export function wireCalendar() {
  $("open-calendar").addEventListener("click", showCalendar);
}
