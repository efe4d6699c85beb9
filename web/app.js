// The reference front end's wiring: renders the API's snapshots and sends the player's taps; every rule is the
// service's. The modules: state.js (the state, changed through the API), render.js (the DOM from a snapshot),
// input.js (clicks and keys), dialogs.js (the dialogs), texts.js (the catalogue's texts), api.js (the HTTP client);
// the player's views: settings.js, help.js, games.js (my games and wins), replay.js, review.js (par, a game's review,
// its certificate), calendar.js (the challenge calendar and its proofs), and views.js (what they share).

import { Api } from "./api.js";
import * as state from "./state.js";
import { wireCalendar } from "./calendar.js";
import { wireDialogs } from "./dialogs.js";
import { wireInput } from "./input.js";
import { wireGames } from "./games.js";
import { wireHelp } from "./help.js";
import { wireReplay } from "./replay.js";
import { wireReview } from "./review.js";
import { wireSettings } from "./settings.js";
import { $, applyTexts, render, retell, showMessage, tick, wait } from "./render.js";
import { chooseLocale, locale, setLocale } from "./texts.js";
import { apiBase } from "./views.js";

setLocale(chooseLocale(localStorage.getItem("pyramide:locale")));
const api = new Api(apiBase(), locale());
state.connect(api);

state.subscribe((now, event) => {
  if (event.kind === "say") showMessage(event.message, event.error);
  else if (event.kind === "busy") $("board").setAttribute("aria-busy", String(event.busy)); // a request in flight
  else if (event.kind === "wait") wait(event.action, event.seconds, now);
  else if (event.kind === "game" || event.kind === "hint") render(now);
});

$("language").addEventListener("change", async (event) => {
  setLocale(event.target.value);
  api.locale = locale();
  localStorage.setItem("pyramide:locale", locale());
  applyTexts();
  render(state.snapshot());
  retell();
  await state.loadCatalogue().catch(() => undefined);
});
$("copy-code").addEventListener("click", async () => {
  const code = state.snapshot().game.code;
  try {
    await navigator.clipboard.writeText(code);
    state.say(state.text("copied"));
  } catch {
    state.say({ key: "codeIs", args: [code] });
  }
});

applyTexts();
wireInput();
wireDialogs();
wireSettings();
wireHelp();
wireGames();
wireReplay();
wireCalendar();
wireReview();
setInterval(() => tick(state.snapshot()), 1000);
state.say(state.text("loading"));
await state.boot();
document.body.dataset.ready = "true";
