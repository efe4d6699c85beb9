// The DOM from a snapshot of the state: the pyramid, the piles, the score line and the controls' availability.
// Nothing here talks to the API or listens for input (input.js does, on the elements drawn here).

import { animateChange, capture } from "./motion.js";
import { outcome } from "./state.js";
import { cardName, cardParts, clock, feedbackText, hasText, inWords, locale, problemText, t } from "./texts.js";

export const $ = (id) => document.getElementById(id);

/** Opens ``dialog`` as a modal with no answer yet. The HTML standard leaves a dialog closed with Escape its last
 * close's returnValue (Chromium clears it, not every browser does), and the handlers that read it would act on the
 * previous choice again: deal a new game, start a challenge, open a leaderboard. */
export function openModal(dialog) {
  dialog.returnValue = "";
  dialog.showModal();
}

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
  if (message.feedback) return feedbackText(message.feedback, message.cards) || inWords(message.fallback || "");
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

/** The cards the player can tap now: every free pyramid card and the waste top, plus every card a legal move
 * names (the waste card beneath a fresh draw under stock-waste pairs, a card covered only by its partner). */
function playableCards(game) {
  const named = new Set((game.legal_moves || []).flatMap((move) => move.split("+")));
  for (const slot of game.pyramid) if (slot.card && slot.free) named.add(slot.card);
  if (game.waste.top) named.add(game.waste.top);
  return named;
}

/** A card: a button when it can be tapped (its name says what shows: "Q♥, queen of hearts"), else a picture
 * named as covered, out of the tab order and out of the arrow keys' reach. */
function cardElement(state, code, { playable, slotLabel = "" }) {
  const { rank, symbol, red } = cardParts(code);
  const face = `${rank}${symbol}`;
  const element = document.createElement(playable ? "button" : "div");
  element.className = `card${red ? " red" : ""}${playable ? "" : " covered"}`;
  element.dataset.card = code;
  const notes = [slotLabel, playable ? "" : t("covered")].filter(Boolean).join(", ");
  const name = notes ? `${cardName(code)} (${notes})` : cardName(code);
  if (playable) {
    element.type = "button";
    element.tabIndex = -1; // the group's one tab stop is chosen by rove()
    element.setAttribute("aria-pressed", String(Boolean(state.game && state.game.selected === code)));
    element.setAttribute("aria-label", `${face}, ${name}`);
  } else {
    element.setAttribute("role", "img");
    element.setAttribute("aria-label", name);
  }
  element.innerHTML = `<span class="rank" aria-hidden="true"></span><span class="suit" aria-hidden="true"></span>`;
  element.firstChild.textContent = rank;
  element.lastChild.textContent = symbol;
  if (state.hinted.includes(code)) element.classList.add("hinted");
  return element;
}

/** Roving tabindex: one tab stop in a group of cards, on the card that had it if it is still there (else the
 * first). Returns the card holding it. */
export function rove(group, code = null) {
  const cards = [...group.querySelectorAll("button[data-card]")];
  const kept = cards.find((c) => c.dataset.card === code) || cards[0] || null;
  for (const card of cards) card.tabIndex = card === kept ? 0 : -1;
  return kept;
}

function tabStop(group) {
  const card = group.querySelector('button[data-card][tabindex="0"]');
  return card ? card.dataset.card : null;
}

function renderPyramid(state, playable) {
  const pyramid = $("pyramid");
  const stop = tabStop(pyramid);
  pyramid.replaceChildren();
  for (let row = 1; row <= 7; row++) {
    const line = document.createElement("div");
    line.className = "row";
    line.dataset.row = String(row);
    line.setAttribute("role", "group");
    line.setAttribute("aria-label", t("row", row));
    for (const slot of state.game.pyramid.filter((s) => s.row === row)) {
      const place = document.createElement("div");
      place.className = "slot";
      if (slot.card) place.append(cardElement(state, slot.card, { playable: playable.has(slot.card) }));
      line.append(place);
    }
    pyramid.append(line);
  }
  rove(pyramid, stop);
}

function renderPiles(state, playable) {
  const game = state.game;
  const stock = $("stock");
  const count = game.stock.count;
  stock.textContent = count ? String(count) : "↻";
  stock.classList.toggle("empty", count === 0);
  stock.classList.toggle("hinted", state.hinted.includes("stock"));
  const canTurn = count === 0 && game.waste.count > 0 && game.recycles.left !== 0;
  stock.setAttribute("aria-label", count ? t("stockCards", count) : canTurn ? t("stockTurn") : t("stockEmpty"));
  stock.disabled = (count === 0 && !canTurn) || !outcome(game.status).running || waiting("stock");
  const waste = $("waste-top");
  const stop = tabStop(waste);
  waste.replaceChildren();
  const cards = game.waste.cards || [];
  const beneath = cards.length >= 2 ? cards[cards.length - 2] : null;
  if (beneath && playable.has(beneath)) {
    const under = cardElement(state, beneath, { playable: true, slotLabel: t("waste") });
    under.classList.add("beneath");
    waste.append(under);
  }
  if (game.waste.top) waste.append(cardElement(state, game.waste.top, { playable: true, slotLabel: t("waste") }));
  rove(waste, stop || game.waste.top);
  waste.classList.toggle("pair", waste.childElementCount > 1);
  $("waste-count").textContent = `${t("waste")}: ${t("wasteCount", game.waste.count)}`;
}

/** Draws the board from the state, keeping the keyboard focus on the same card when it is still there. */
export function render(state) {
  const game = state.game;
  if (!game) return;
  const active = document.activeElement;
  const focused = active && active.dataset && active.dataset.card ? active : null;
  const group = focused ? focused.closest("#pyramid, #waste-top") : null;
  const playable = playableCards(game);
  const before = drawnGame === game.id ? capture() : null; // a new game arrives without motion
  drawnGame = game.id;
  renderPyramid(state, playable);
  renderPiles(state, playable);
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
  if (focused) refocus(focused.dataset.card, group);
}

/** Keeps the keyboard where it was: the same card, else its group's tab stop, else the pyramid's, else the stock. */
function refocus(card, group) {
  const same = document.querySelector(`button[data-card="${card}"]`);
  const stop = (element) => (element ? element.querySelector('button[tabindex="0"]') : null);
  const next = same || stop(group) || stop($("pyramid")) || $("stock");
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
