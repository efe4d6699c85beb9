// The DOM from a snapshot of the state: the pyramid, the piles, the score line and the controls' availability.
// Nothing here talks to the API or listens for input (input.js does, on the elements drawn here).

import { outcome } from "./state.js";
import { cardName, cardParts, clock, locale, t } from "./texts.js";

export const $ = (id) => document.getElementById(id);

/** Every fixed text of the page in its language. */
export function applyTexts() {
  document.documentElement.lang = locale();
  $("language").value = locale();
  for (const element of document.querySelectorAll("[data-text]")) element.textContent = t(element.dataset.text);
  document.title = `Pyramide — ${t("title")}`;
}

/** Shows a message in the live region (an error in its own colour). */
export function showMessage(text, error = false) {
  const feedback = $("feedback");
  feedback.textContent = text || "";
  feedback.classList.toggle("error", error);
}

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
  stock.disabled = count === 0 && !canTurn;
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
  renderPyramid(state);
  renderPiles(state);
  $("score").textContent = game.score;
  $("moves").textContent = game.moves;
  $("code").textContent = game.code || `${game.challenge} (${t("sealed")})`;
  $("copy-code").disabled = !game.code;
  $("undo").disabled = game.undo_available === 0;
  const over = outcome(game.status).final;
  $("hint").disabled = over || Boolean(game.challenge && !game.code);
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
  const game = state.game;
  if (!game) return;
  let elapsed = game.elapsed_ms;
  if (elapsed != null && outcome(game.status).running) elapsed += Date.now() - state.receivedAt;
  $("time").textContent = clock(elapsed);
}
