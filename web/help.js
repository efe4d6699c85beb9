// The rules and help view: the rules (from the rules document, in the catalogue in both languages) and the keyboard
// shortcuts. The "?" key opens it from anywhere but a text field.

import { $ } from "./render.js";

/** Opens the rules and help view. */
export function showHelp() {
  if (!$("help-dialog").open) $("help-dialog").showModal();
}

function typing(target) {
  return Boolean(target && target.closest && target.closest("input, textarea, select, [contenteditable]"));
}

function onKey(event) {
  if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  if (document.querySelector("dialog[open]:not(#help-dialog)")) return;
  event.preventDefault();
  showHelp();
}

/** Wires the header's button and the "?" key. */
export function wireHelp() {
  $("open-help").addEventListener("click", showHelp);
  document.addEventListener("keydown", onKey);
}
