// The rules and help view: the rules (from the rules document, in the catalogue in both languages) and the keyboard
// shortcuts. The "?" key opens it (input.js, which reads every shortcut, sends "pyramide:help").

import { $ } from "./render.js";

/** Opens the rules and help view. */
export function showHelp() {
  if (!$("help-dialog").open) $("help-dialog").showModal();
}

/** Wires the header's button and the "?" key's event. */
export function wireHelp() {
  $("open-help").addEventListener("click", showHelp);
  document.addEventListener("pyramide:help", showHelp);
}
