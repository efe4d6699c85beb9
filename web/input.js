// The player's input: clicks on cards and piles, a card dragged onto its partner (pointer events: mouse, pen and
// touch alike), the controls, and the keyboard shortcuts. Every action goes to state.js, which asks the API;
// nothing here decides a rule.

import * as state from "./state.js";
import { snapBack } from "./motion.js";
import { $ } from "./render.js";

const DRAG_START_PX = 6; // less than this is a tap that trembled, not a drag

let drag = null; // the card being dragged: { element, card, id, x, y, moved }
let swallowClick = false; // the click a browser sends after a drag is no tap

function onCard(event) {
  const card = event.target.closest("[data-card]");
  if (card) state.tap({ card: card.dataset.card });
}

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
  const key = event.key.toLowerCase();
  if (key === "d" && !$("stock").disabled) state.tap({ target: "stock" });
  else if (key === "u" && !$("undo").disabled) state.move({ type: "undo" });
  else if (key === "h" && !$("hint").disabled) state.hint();
}

/** Listens for the board's and the controls' input (once: the board's elements are redrawn, their parents stay). */
export function wireInput() {
  $("pyramid").addEventListener("click", onCard);
  $("waste-top").addEventListener("click", onCard);
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
