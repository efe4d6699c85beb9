// What the player's views share: a message line of their own (a modal dialog hides the page's), a problem in
// words, a confirmation in a dialog of the page, dates in the page's language, and "play this deal again".

import { ApiError } from "./api.js";
import * as state from "./state.js";
import { $ } from "./render.js";
import { locale, t } from "./texts.js";

/** Shows text on a view's own message line (an error in its own colour). */
export function tell(id, text, error = false) {
  const line = $(id);
  line.textContent = text || "";
  line.classList.toggle("error", error);
}

/** A failure in words: the entries of a refused body's problem (each says what was wrong, never where in JSON),
 * else the problem's detail or title, else that the service cannot be reached. */
export function problemText(error) {
  if (!(error instanceof ApiError)) return t("failed");
  const entries = (error.problem.errors || []).map((entry) => entry.message).filter(Boolean);
  return entries.length ? entries.join(" ") : error.message;
}

/** Asks the player to confirm ``text`` in the page's confirmation dialog; resolves to true for yes. */
export function confirmed(text, yes) {
  const dialog = $("confirm-dialog");
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  dialog.returnValue = "";
  dialog.showModal();
  $("confirm-no").focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}

/** A moment from the API in the page's language. */
export function when(iso) {
  return new Date(iso).toLocaleString(locale() === "hu" ? "hu-HU" : "en-GB", { dateStyle: "short", timeStyle: "short" });
}

/** Deals a new game with ``code`` (its rules are in the code): the same deal again. */
export function playAgain(code) {
  if (code) state.deal({ code });
}

/** The API's base URL: `?api=` on the page's address, else the `pyramide-api` meta tag; empty: this origin. */
export function apiBase() {
  const asked = new URLSearchParams(location.search).get("api");
  return asked || document.querySelector('meta[name="pyramide-api"]').content || "";
}
