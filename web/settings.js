// The settings view: the name shown on boards, the language, error explanations for new games, and the player's
// data: reset the statistics, download everything kept as a JSON file, delete it all (then play on as a new
// player). Only public routes: getCurrentPlayer, updateCurrentPlayer, resetPlayerStats, exportPlayerData,
// erasePlayer.

import * as state from "./state.js";
import { $ } from "./render.js";
import { locale, t } from "./texts.js";
import { confirmed, problemText, tell } from "./views.js";

const say = (text, error = false) => tell("settings-message", text, error);

let sent = 0; // the requests whose answer fills the form, numbered as they are sent
let shown = 0; // the number of the one the form shows: an older one answered later is stale and fills nothing

/** The player's settings become the form's (and explanations the new-game dialog's default). */
function fill(player) {
  $("player-name").value = player.name || "";
  $("settings-explain").checked = player.explain_errors;
  $("explain-errors").checked = player.explain_errors;
  $("settings-language").value = locale();
}

/** Sends a request whose answer is the player, and fills the form with it unless a later one filled it first (a
 * slow first read must not undo a setting saved meanwhile). */
async function read(method, body) {
  const number = ++sent;
  const { data } = await state.call(method, "/v1/players/me", body);
  if (number > shown) {
    shown = number;
    fill(data);
  }
  return data;
}

async function update(changes) {
  try {
    return await read("PATCH", changes);
  } catch (error) {
    say(problemText(error), true);
    return undefined;
  }
}

/** Opens the settings view with the player's settings as the service holds them. */
export async function showSettings() {
  say("");
  try {
    await read("GET");
  } catch (error) {
    say(problemText(error), true);
  }
  if (!$("settings-dialog").open) $("settings-dialog").showModal();
}

async function saveName() {
  const name = $("player-name").value.trim();
  const player = await update({ name: name || null });
  if (player) say(t("nameSaved", player.name || t("nameNone")));
}

async function chooseLanguage() {
  const chosen = $("settings-language").value;
  const header = $("language");
  header.value = chosen;
  header.dispatchEvent(new Event("change")); // app.js switches the page's language
  if (await update({ locale: chosen })) say(t("settingSaved"));
}

async function explain() {
  if (await update({ explain_errors: $("settings-explain").checked })) say(t("settingSaved"));
}

async function resetStats() {
  const yes = await confirmed(t("resetConfirm"), t("resetStats"));
  $("settings-dialog").querySelector("#reset-stats").focus();
  if (!yes) return;
  try {
    await state.call("DELETE", "/v1/players/me/stats");
    say(t("statsReset"));
  } catch (error) {
    say(problemText(error), true);
  }
}

async function exportData() {
  try {
    const { data } = await state.call("GET", "/v1/players/me/export");
    const name = t("downloadName", new Date().toISOString().slice(0, 10));
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }));
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    say(t("exported", name));
  } catch (error) {
    say(problemText(error), true);
  }
}

async function eraseData() {
  const yes = await confirmed(t("eraseConfirm"), t("eraseData"));
  if (!yes) {
    $("erase-data").focus();
    return;
  }
  try {
    await state.call("DELETE", "/v1/players/me");
    await state.forget();
    await read("GET");
    say(t("erased"));
  } catch (error) {
    say(problemText(error), true);
  }
  $("erase-data").focus();
}

/** Wires the view's controls, and takes the player's explanations setting as the new-game default at the start. */
export function wireSettings() {
  $("open-settings").addEventListener("click", showSettings);
  $("save-name").addEventListener("click", saveName);
  $("player-name").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      saveName();
    }
  });
  $("settings-language").addEventListener("change", chooseLanguage);
  $("settings-explain").addEventListener("change", explain);
  $("reset-stats").addEventListener("click", resetStats);
  $("export-data").addEventListener("click", exportData);
  $("erase-data").addEventListener("click", eraseData);
  const stop = state.subscribe((now, event) => {
    if (event.kind !== "catalogue") return; // the first load has a player now
    stop();
    read("GET").catch(() => undefined);
  });
}
