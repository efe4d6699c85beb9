// The player's input: clicks on cards and piles, the controls, and the keyboard shortcuts. Every action goes to
// state.js, which asks the API; nothing here decides a rule.

import * as state from "./state.js";
import { $ } from "./render.js";

function onCard(event) {
  const card = event.target.closest("[data-card]");
  if (card) state.tap({ card: card.dataset.card });
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
  $("stock").addEventListener("click", () => state.tap({ target: "stock" }));
  $("undo").addEventListener("click", () => state.move({ type: "undo" }));
  $("hint").addEventListener("click", () => state.hint());
  document.addEventListener("keydown", onKey);
}
