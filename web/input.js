// The player's input: clicks and taps on cards and piles, a card dragged onto its partner (pointer events: mouse,
// pen and touch alike), the controls, and the keyboard. Every action goes to state.js, which asks the API; nothing
// here decides a rule.
//
// Keyboard: the pyramid is one tab stop (roving tabindex over the cards that can be tapped; arrows move between
// them spatially: left/right in a row, up/down to the nearest in the row above/below; Home/End), the stock and the
// waste one each; Enter/Space taps (the buttons' own); D draws, U undoes, H hints, N opens a new game, ? asks for
// the help view (a "pyramide:help" event on document, for the view that handles it).

import * as state from "./state.js";
import { newGame } from "./dialogs.js";
import { snapBack } from "./motion.js";
import { $, rove } from "./render.js";

const DRAG_START_PX = 6; // less than this is a tap that trembled, not a drag

let drag = null; // the card being dragged: { element, card, id, x, y, moved }
let swallowClick = false; // the click a browser sends after a drag is no tap

function onCard(event) {
  const card = event.target.closest("[data-card]");
  if (card) state.tap({ card: card.dataset.card });
}

function centre(element) {
  const box = element.getBoundingClientRect();
  return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
}

/** The card an arrow key leads to from `from` among `cards` (null: none that way). */
function neighbour(cards, from, key) {
  const here = centre(from);
  const row = (card) => Number(card.closest("[data-row]")?.dataset.row || 0);
  const current = row(from);
  const distance = (card) => Math.abs(centre(card).x - here.x);
  let candidates;
  if (key === "ArrowLeft" || key === "ArrowRight") {
    const sign = key === "ArrowLeft" ? -1 : 1;
    candidates = cards.filter((c) => c !== from && row(c) === current && sign * (centre(c).x - here.x) > 0);
  } else {
    const others = cards.filter((c) => (key === "ArrowUp" ? row(c) < current : row(c) > current));
    if (!others.length) return null;
    const nearest = key === "ArrowUp" ? Math.max(...others.map(row)) : Math.min(...others.map(row));
    candidates = others.filter((c) => row(c) === nearest);
  }
  return candidates.sort((a, b) => distance(a) - distance(b))[0] || null;
}

const MOVES = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"]);

/** Arrow keys, Home and End inside a card group (the pyramid or the waste). */
function onGroupKey(event) {
  if (!MOVES.has(event.key)) return;
  const group = event.currentTarget;
  const from = event.target.closest("button[data-card]");
  const cards = [...group.querySelectorAll("button[data-card]")];
  if (!from || !cards.length) return;
  event.preventDefault();
  const to =
    event.key === "Home" ? cards[0] : event.key === "End" ? cards[cards.length - 1] : neighbour(cards, from, event.key);
  if (!to) return;
  rove(group, to.dataset.card);
  to.focus();
}

/** Follows a click on a card of a group: the group's tab stop goes with it. */
function onGroupFocus(event) {
  const card = event.target.closest("button[data-card]");
  if (card) rove(event.currentTarget, card.dataset.card);
}

const SHORTCUTS = {
  d: () => !$("stock").disabled && state.tap({ target: "stock" }),
  u: () => !$("undo").disabled && state.move({ type: "undo" }),
  h: () => !$("hint").disabled && state.hint(),
  n: () => newGame(),
  "?": () => document.dispatchEvent(new CustomEvent("pyramide:help")),
};

function onPointerDown(event) {
  const element = event.target.closest("[data-card]:not(.covered)");
  if (!element || event.button > 0 || drag) return;
  drag = { element, card: element.dataset.card, id: event.pointerId, x: event.clientX, y: event.clientY, moved: false };
  try {
    element.setPointerCapture(event.pointerId);
  } catch {
    // a pointer the browser does not track (a synthetic one): the document still hears it
  }
}

function onPointerMove(event) {
  if (!drag || event.pointerId !== drag.id) return;
  const dx = event.clientX - drag.x;
  const dy = event.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < DRAG_START_PX) return;
  drag.moved = true;
  drag.element.classList.add("dragging");
  drag.element.style.transform = `translate(${dx}px, ${dy}px)`;
}

/** The card under the point, other than the one dragged (which lies on top of it). */
function partnerAt(x, y, dragged) {
  for (const element of document.elementsFromPoint(x, y)) {
    const card = element.closest("[data-card]");
    if (card && card !== dragged) return card.dataset.card;
  }
  return null;
}

function onPointerUp(event) {
  if (!drag || event.pointerId !== drag.id) return;
  const { element, card, moved } = drag;
  drag = null;
  element.classList.remove("dragging");
  if (!moved) return;
  swallowClick = true;
  setTimeout(() => (swallowClick = false), 0);
  const partner = event.type === "pointerup" ? partnerAt(event.clientX, event.clientY, element) : null;
  const dropped = element.getBoundingClientRect();
  element.style.transform = "";
  const home = element.getBoundingClientRect();
  snapBack(element, dropped.left - home.left, dropped.top - home.top);
  if (partner) state.move({ type: "pair", cards: [card, partner] }); // refused: the usual feedback, and it is back
}

function onClickCapture(event) {
  if (!swallowClick) return;
  swallowClick = false;
  event.stopPropagation();
  event.preventDefault();
}

function onKey(event) {
  if (event.target.closest("input, select, dialog") || event.ctrlKey || event.metaKey || event.altKey) return;
  const action = SHORTCUTS[event.key.length === 1 ? event.key.toLowerCase() : ""];
  if (!action) return;
  event.preventDefault();
  action();
}

/** Listens for the board's and the controls' input (once: the board's elements are redrawn, their parents stay). */
export function wireInput() {
  for (const group of [$("pyramid"), $("waste-top")]) {
    group.addEventListener("click", onCard);
    group.addEventListener("keydown", onGroupKey);
    group.addEventListener("focusin", onGroupFocus);
  }
  $("board").addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
  document.addEventListener("click", onClickCapture, true);
  $("stock").addEventListener("click", () => state.tap({ target: "stock" }));
  $("undo").addEventListener("click", () => state.move({ type: "undo" }));
  $("hint").addEventListener("click", () => state.hint());
  document.addEventListener("keydown", onKey);
}
