// The DOM from a snapshot of the state: the pyramid, the piles, the score line and the controls' availability.
// Nothing here talks to the API or listens for input (input.js does, on the elements drawn here).

import { animateChange, capture } from "./motion.js";
import { outcome } from "./state.js";
import { cardName, cardParts, clock, feedbackText, hasText, locale, problemText, t } from "./texts.js";

export const $ = (id) => document.getElementById(id);

/** Every fixed text of the page in its language. */
export function applyTexts() {
  document.documentElement.lang = locale();
  $("language").value = locale();
  for (const element of document.querySelectorAll("[data-text]")) element.textContent = t(element.dataset.text);
  document.title = `Pyramide — ${t("title")}`;
}

let drawnGame = null; // the game whose board is drawn now
let said = { message: null, error: false }; // the message on the line, said again in a new language
const waits = new Map(); // a control's id -> when (ms) the service lets it act again, after a rate limit

/** A message (see state.js) in words in the page's language: never a JSON pointer, a version or a raw code. */
export function words(message) {
  if (!message) return "";
  if (message.key) return t(message.key, ...(message.args || []));
  if (message.feedback) return feedbackText(message.feedback, message.cards) || message.fallback || "";
  const problem = message.problem || {};
  const own = `problem_${problem.code}`;
  if (hasText(own)) return t(own);
  return problemText(problem.code, problem) || feedbackText(problem.code) || problem.title || t("failed");
}

/** Shows a message in the live region (an error in its own colour) and keeps it to say again in another language. */
export function showMessage(message, error = false) {
  said = { message, error };
  const feedback = $("feedback");
  feedback.textContent = words(message);
  feedback.classList.toggle("error", error);
}

/** Says the message on the line again (after a language switch). */
export function retell() {
  showMessage(said.message, said.error);
}

const WAITING = { hint: ["hint", "waitHint"], undo: ["undo", "waitOther"], tap: ["stock", "waitOther"] };

/** A rate limit as a calm wait: the control that met it off, and a countdown on the message line until then. */
export function wait(action, seconds, state) {
  const [control, key] = WAITING[action] || [null, "waitOther"];
  if (control) waits.set(control, Date.now() + seconds * 1000);
  showMessage({ key, args: [seconds], until: Date.now() + seconds * 1000 });
  render(state);
}

/** The countdown of a wait, once a second; the line is cleared and the control back on when it is over. */
function countdown(state) {
  const message = said.message;
  if (message && message.until) {
    const left = Math.ceil((message.until - Date.now()) / 1000);
    if (left > 0) showMessage({ ...message, args: [left] });
    else showMessage(null);
  }
  let over = false;
  for (const [control, until] of waits) {
    if (until <= Date.now()) over = waits.delete(control);
  }
  if (over) render(state);
}

const waiting = (control) => (waits.get(control) || 0) > Date.now();

function cardButton(state, code, { free = true, slotLabel = "" } = {}) {
  const { rank, symbol, red } = cardParts(code);
  const button = document.createElement("button");
  button.type = "button";
  button.className = `card${red ? " red" : ""}${free ? "" : " covered"}`;
  button.dataset.card = code;
  const selected = state.game && state.game.selected === code;
  button.setAttribute("aria-pressed", String(selected));
  const notes = [slotLabel, free ? "" : t("covered")].filter(Boolean).join(", ");
  button.setAttribute("aria-label", notes ? `${cardName(code)} (${notes})` : cardName(code));
  button.innerHTML = `<span class="rank"></span><span class="suit" aria-hidden="true"></span>`;
  button.firstChild.textContent = rank;
  button.lastChild.textContent = symbol;
  if (state.hinted.includes(code)) button.classList.add("hinted");
  return button;
}

function renderPyramid(state) {
  const pyramid = $("pyramid");
  pyramid.replaceChildren();
  for (let row = 1; row <= 7; row++) {
    const line = document.createElement("div");
    line.className = "row";
    line.setAttribute("role", "group");
    line.setAttribute("aria-label", t("row", row));
    for (const slot of state.game.pyramid.filter((s) => s.row === row)) {
      const place = document.createElement("div");
      place.className = "slot";
      if (slot.card) place.append(cardButton(state, slot.card, { free: slot.free }));
      line.append(place);
    }
    pyramid.append(line);
  }
}

function renderPiles(state) {
  const game = state.game;
  const stock = $("stock");
  const count = game.stock.count;
  stock.textContent = count ? String(count) : "↻";
  stock.classList.toggle("empty", count === 0);
  stock.classList.toggle("hinted", state.hinted.includes("stock"));
  const canTurn = count === 0 && game.waste.count > 0 && game.recycles.left !== 0;
  stock.setAttribute("aria-label", count ? t("stockCards", count) : canTurn ? t("stockTurn") : t("stockEmpty"));
  stock.disabled = (count === 0 && !canTurn) || !outcome(game.status).running || waiting("stock");
  const top = $("waste-top");
  top.replaceChildren();
  if (game.waste.top) top.append(cardButton(state, game.waste.top, { slotLabel: t("waste") }));
  $("waste-count").textContent = `${t("waste")}: ${t("wasteCount", game.waste.count)}`;
}

/** Draws the board from the state, keeping the keyboard focus on the same card when it is still there. */
export function render(state) {
  const game = state.game;
  if (!game) return;
  const active = document.activeElement;
  const focused = active && active.dataset ? active.dataset.card : null;
  const before = drawnGame === game.id ? capture() : null; // a new game arrives without motion
  drawnGame = game.id;
  renderPyramid(state);
  renderPiles(state);
  animateChange(before);
  $("score").textContent = game.score;
  $("moves").textContent = game.moves;
  $("code").textContent = game.code || `${game.challenge} (${t("sealed")})`;
  $("copy-code").disabled = !game.code;
  const over = outcome(game.status).final;
  $("undo").disabled = game.undo_available === 0 || over || waiting("undo");
  $("hint").disabled = over || Boolean(game.challenge && !game.code) || waiting("hint");
  $("abandon").disabled = over;
  tick(state);
  if (focused) refocus(focused);
}

function refocus(card) {
  const same = document.querySelector(`[data-card="${card}"]`);
  const next = same || document.querySelector(".card:not(.covered)[data-card]") || $("stock");
  next.focus();
}

/** The clock: the server's time, plus the time since the snapshot while the game runs. */
export function tick(state) {
  countdown(state);
  const game = state.game;
  if (!game) return;
  let elapsed = game.elapsed_ms;
  if (elapsed != null && outcome(game.status).running) elapsed += Date.now() - state.receivedAt;
  $("time").textContent = clock(elapsed);
}
