// The page's dialogs: a new game (rule presets and variants from GET /v1/rules, a pasted code), the end of play,
// the player's statistics, a leaderboard, the daily challenge, and the abandon confirmation.

import * as state from "./state.js";
import { $, openModal, words } from "./render.js";
import { clock, locale, t } from "./texts.js";
import { playAgain } from "./views.js";

function rulesFromForm() {
  const recycles = $("recycles").value;
  const rules = { recycles: recycles === "" ? null : Number(recycles) };
  for (const box of document.querySelectorAll("#variants input")) rules[box.name] = box.checked;
  return rules;
}

function setRulesForm(rules) {
  $("recycles").value = rules.recycles == null ? "" : String(rules.recycles);
  for (const box of document.querySelectorAll("#variants input")) box.checked = Boolean(rules[box.name]);
}

/** Fills the new-game and challenge forms from the rule catalogue. */
function fillRules(data) {
  const presets = $("presets");
  presets.replaceChildren();
  data.presets.forEach((preset, index) => {
    const label = document.createElement("label");
    label.innerHTML = `<input type="radio" name="preset"> <span></span><small class="preset-description"></small>`;
    const input = label.querySelector("input");
    input.value = preset.segment;
    input.checked = index === 0;
    input.addEventListener("change", () => setRulesForm(preset.rules));
    label.querySelector("span").textContent = `${preset.name} (${preset.segment})`;
    label.querySelector("small").textContent = preset.description;
    presets.append(label);
  });
  const variants = $("variants");
  variants.replaceChildren();
  for (const variant of data.variants.filter((v) => v.key !== "recycles")) {
    const label = document.createElement("label");
    label.innerHTML = `<input type="checkbox"> <span></span>`;
    label.querySelector("input").name = variant.key;
    label.querySelector("span").textContent = variant.name;
    label.title = variant.description;
    variants.append(label);
  }
  const recycles = $("recycles");
  while (recycles.options.length > 1) recycles.remove(1);
  for (let n = 0; n <= 9; n++) recycles.add(new Option(String(n), String(n)));
  setRulesForm(data.presets[0].rules);
  const challengePreset = $("challenge-preset");
  const chosen = challengePreset.value || "N";
  challengePreset.replaceChildren(...data.presets.map((p) => new Option(`${p.name} (${p.segment})`, p.segment)));
  challengePreset.value = chosen;
}

/** The end of play (won, or stuck with undo offered) when a game's status changes under the player's eyes. */
function ending(game) {
  const end = state.outcome(game.status).end;
  if (!end) return;
  $("end-title").textContent = t(end);
  $("end-summary").textContent = t("wonSummary", game.score, game.moves, clock(game.elapsed_ms));
  $("end-undo").hidden = end !== "stuck";
  $("end-again").hidden = !game.code;
  openModal($("end-dialog"));
}

export async function showStats() {
  const data = await state.fetchData("/v1/players/me/stats");
  if (!data) return;
  const rows = [
    ["played", data.played], ["wonGames", data.won], ["lost", data.lost],
    ["winRate", `${Math.round(data.win_rate * 100)}%`], ["streak", data.current_streak],
    ["bestStreak", data.best_streak], ["bestTime", data.best_time_ms == null ? "—" : clock(data.best_time_ms)],
    ["fewestMoves", data.fewest_moves ?? "—"], ["hintsUsed", data.hints_used],
  ];
  $("stats").replaceChildren(...rows.flatMap(([key, value]) => {
    const term = document.createElement("dt");
    term.textContent = t(key);
    const detail = document.createElement("dd");
    detail.textContent = String(value);
    detail.dataset.stat = key;
    return [term, detail];
  }));
  $("stats-dialog").showModal();
}

let stopBoard = () => undefined; // stops following the open leaderboard dialog's board

/** The board's first page as rows of the leaderboard dialog. */
function fillBoard(data) {
  const rows = data.entries.map((entry) => {
    const row = document.createElement("tr");
    for (const value of [entry.rank, entry.name || t("anonymous"), clock(entry.elapsed_ms), entry.moves]) {
      const cell = document.createElement("td");
      cell.textContent = String(value);
      row.append(cell);
    }
    return row;
  });
  if (!rows.length) {
    const row = document.createElement("tr");
    row.innerHTML = `<td colspan="4"></td>`;
    row.firstChild.textContent = t("noEntries");
    rows.push(row);
  }
  $("board-entries").replaceChildren(...rows);
}

/** A leaderboard in its dialog, kept up to date while it is open (its live stream, else polling its GET). */
async function showBoard(path, title, verified) {
  const data = await state.fetchData(path);
  if (!data) return;
  $("board-title").textContent = title;
  $("board-note").textContent = verified ? t("verified") : t("unverified");
  fillBoard(data);
  stopBoard();
  stopBoard = state.followPublic(path, "board", fillBoard);
  if (!$("board-dialog").open) $("board-dialog").showModal();
}

/** The leaderboard of the game on the table: its challenge's (verified) or its deal's. */
export function gameBoard() {
  const game = state.snapshot().game;
  if (game && game.challenge) return showChallengeBoard(game.challenge);
  if (game && game.code) return showBoard(`/v1/leaderboards/${encodeURIComponent(game.code)}`, `${t("leaderboard")}: ${game.code}`, false);
  return undefined;
}

function showChallengeBoard(id) {
  return showBoard(`/v1/challenges/${encodeURIComponent(id)}/leaderboard`, `${t("challenge")}: ${id}`, true);
}

let shownPreset = null; // the preset whose challenge the challenge dialog shows (state.snapshot().challenge)
let readingPreset = false; // a preset's challenge is being read for the challenge dialog
let openAsked = false; // the dialog was asked open while that read was out: it opens on the read's answer

/** The challenge dialog's information and "Start" for a challenge (an answer of GET /v1/challenges/current). */
function fillChallenge(data) {
  const closes = new Date(data.closes_at).toLocaleString(locale() === "hu" ? "hu-HU" : "en-GB");
  $("challenge-info").textContent = `${t("challengeOf", data.id)} · ${t("closesAt", closes)} · ${t("playersCount", data.players)}`;
  const you = data.you;
  const playing = Boolean(you && you.status && state.outcome(you.status).running);
  $("challenge-you").textContent = !you ? "" : you.rank ? t("yourRank", you.rank) : playing ? t("inProgress") : t("challengePlayed");
  const start = $("challenge-start");
  start.textContent = playing ? t("continueChallenge") : t("startChallenge");
  start.disabled = Boolean(you && !playing);
  $("challenge-board").disabled = false;
}

/**
 * The challenge dialog on the chosen preset's current challenge (opened, or another preset chosen in it). While
 * that is read "Start" and "Leaderboard" wait: the page sends one request at a time, so either meanwhile would be
 * dropped. A preset chosen during the read is read when it answers; a read that fails or is dropped shows the
 * preset shown before.
 */
export function showChallenge() {
  return readChallenge(!$("challenge-dialog").open);
}

/** showChallenge's read; opening: the dialog opens on the answer (a dialog the player closed during a
 * preset's read stays closed). */
async function readChallenge(opening) {
  if (readingPreset) {
    openAsked ||= opening; // the read in flight reads the preset chosen meanwhile, and opens the dialog if asked
    return undefined;
  }
  readingPreset = true;
  const select = $("challenge-preset");
  const preset = select.value || "N";
  $("challenge-start").disabled = true; // as the board: each would be dropped while the read is out
  $("challenge-board").disabled = true;
  $("challenge-info").textContent = t("loading");
  $("challenge-you").textContent = "";
  let data;
  try {
    data = await state.fetchData(`/v1/challenges/current?rules=${encodeURIComponent(preset)}`);
  } finally {
    readingPreset = false;
  }
  if (!data) {
    openAsked = false;
    const shown = state.snapshot().challenge;
    if (shown && shownPreset) {
      select.value = shownPreset;
      fillChallenge(shown);
    }
    return undefined;
  }
  if ((select.value || "N") !== preset) return readChallenge(opening);
  shownPreset = preset;
  state.setChallenge(data);
  fillChallenge(data);
  if ((opening || openAsked) && !$("challenge-dialog").open) openModal($("challenge-dialog"));
  openAsked = false;
  return undefined;
}

function confirmAbandon() {
  if (window.confirm(t("abandonConfirm"))) state.abandon();
}

function onNewGameClosed() {
  const choice = $("new-game-dialog").returnValue;
  const explain_errors = $("explain-errors").checked;
  if (choice === "deal") state.deal({ rules: rulesFromForm(), winnable_only: $("winnable-only").checked, explain_errors });
}

/** Marks the code field invalid with a sentence (or valid again with none), for the eye and for screen readers. */
function markCode(sentence) {
  const field = $("paste-code");
  const error = $("paste-code-error");
  error.textContent = sentence || "";
  error.hidden = !sentence;
  if (sentence) {
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", "paste-code-error");
  } else {
    field.removeAttribute("aria-invalid");
    field.removeAttribute("aria-describedby");
  }
}

/** Plays a pasted code; the dialog stays open, with what was typed and a plain sentence, when it is refused. */
async function playCode() {
  const code = $("paste-code").value.trim();
  if (!code) return markCode(t("codeEmpty"));
  const refused = await state.deal({ code, explain_errors: $("explain-errors").checked }, { keepRefusal: true });
  if (refused) return markCode(words({ problem: refused.problem }));
  markCode(null);
  $("new-game-dialog").close("");
  return undefined;
}

function onNewGameSubmit(event) {
  if (!event.submitter || event.submitter.value !== "code") return;
  event.preventDefault();
  playCode();
}

function onCodeKey(event) {
  if (event.key !== "Enter") return;
  event.preventDefault(); // not the form's first button (a random deal): the code's own
  playCode();
}

function onEndClosed() {
  const choice = $("end-dialog").returnValue;
  if (choice === "new") newGame();
  if (choice === "undo") state.move({ type: "undo" });
  if (choice === "board") gameBoard();
  if (choice === "again") playAgain(state.snapshot().game.code);
}

function onChallengeClosed() {
  const choice = $("challenge-dialog").returnValue;
  const challenge = state.snapshot().challenge;
  if (!challenge) return;
  if (choice === "start" && challenge.you) state.open(challenge.you.game_id);
  else if (choice === "start") state.deal({ challenge: challenge.id, explain_errors: $("explain-errors").checked });
  if (choice === "board") showChallengeBoard(challenge.id);
}

/** Opens the new-game dialog (the N key and the header's button). */
export function newGame() {
  markCode(null);
  openModal($("new-game-dialog"));
}

/** Wires the dialogs' buttons and closings, and follows the state for the catalogue and the end of play. */
export function wireDialogs() {
  $("abandon").addEventListener("click", confirmAbandon);
  $("new-game").addEventListener("click", newGame);
  $("open-stats").addEventListener("click", showStats);
  $("open-board").addEventListener("click", gameBoard);
  $("open-challenge").addEventListener("click", showChallenge);
  $("challenge-preset").addEventListener("change", showChallenge);
  $("new-game-dialog").addEventListener("close", onNewGameClosed);
  $("new-game-form").addEventListener("submit", onNewGameSubmit);
  $("paste-code").addEventListener("keydown", onCodeKey);
  $("paste-code").addEventListener("input", () => markCode(null));
  $("end-dialog").addEventListener("close", onEndClosed);
  $("challenge-dialog").addEventListener("close", onChallengeClosed);
  $("board-dialog").addEventListener("close", () => stopBoard());
  state.subscribe((now, event) => {
    if (event.kind === "catalogue") fillRules(now.catalogue);
    const before = event.kind === "game" ? event.before : null;
    if (before && before.id === now.game.id && before.status !== now.game.status) ending(now.game);
  });
}
