// My games and my wins: the player's games (listPlayerGames, page by page) with status, code, moves and date, to
// resume an unfinished one, replay a finished one or play its deal again; the won games (listPlayerWins).

import * as state from "./state.js";
import { $ } from "./render.js";
import { clock, t } from "./texts.js";
import { showReplay } from "./replay.js";
import { showReview } from "./review.js";
import { playAgain, problemText, tell, when } from "./views.js";

const cursors = { games: null, wins: null };

function button(text, action) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = text;
  element.addEventListener("click", action);
  return element;
}

function row(values, actions) {
  const line = document.createElement("tr");
  for (const value of values) {
    const cell = document.createElement("td");
    cell.textContent = String(value);
    line.append(cell);
  }
  line.children[1].className = "code";
  const cell = document.createElement("td");
  cell.append(...actions);
  line.append(cell);
  return line;
}

function empty(columns, text) {
  const line = document.createElement("tr");
  const cell = document.createElement("td");
  cell.colSpan = columns;
  cell.textContent = text;
  line.append(cell);
  return line;
}

function resume(id) {
  $("games-dialog").close();
  state.open(id);
}

function gameActions(game) {
  const code = game.code || "";
  const actions = [];
  if (!state.outcome(game.status).final) actions.push(button(t("resume"), () => resume(game.id))); // stuck: undo
  if (game.status !== "in_progress") actions.push(button(t("replay"), () => showReplay(game.id, code)));
  if (game.status !== "in_progress") actions.push(button(t("review"), () => showReview(game.id, code)));
  if (game.code) actions.push(button(t("playAgain"), () => { $("games-dialog").close(); playAgain(game.code); }));
  for (const action of actions) action.dataset.game = game.id;
  return actions;
}

function gameRow(game) {
  const code = game.code || `${game.challenge} (${t("sealed")})`;
  const line = row([t(`status_${game.status}`), code, game.moves, when(game.updated_at)], gameActions(game));
  line.dataset.game = game.id;
  line.dataset.status = game.status;
  return line;
}

function winRow(win) {
  const actions = [button(t("replay"), () => showReplay(win.game_id, win.code || "")),
    button(t("review"), () => showReview(win.game_id, win.code || ""))];
  if (win.code) actions.push(button(t("playAgain"), () => { $("games-dialog").close(); playAgain(win.code); }));
  const line = row([win.rank ?? "—", win.code || win.challenge, clock(win.elapsed_ms), win.moves, when(win.finished_at)], actions);
  line.dataset.game = win.game_id;
  return line;
}

async function page(kind, more) {
  const path = kind === "games" ? "/v1/players/me/games" : "/v1/players/me/wins";
  const query = more && cursors[kind] ? `?cursor=${encodeURIComponent(cursors[kind])}` : "";
  const { data } = await state.call("GET", path + query);
  cursors[kind] = data.next_cursor;
  const body = $(`${kind}-entries`);
  const rows = data.entries.map(kind === "games" ? gameRow : winRow);
  if (more) body.append(...rows);
  else body.replaceChildren(...(rows.length ? rows : [empty(kind === "games" ? 5 : 6, t(kind === "games" ? "noGames" : "noWins"))]));
  $(`${kind}-more`).hidden = !data.next_cursor;
}

async function load(kind, more) {
  try {
    await page(kind, more);
  } catch (error) {
    tell("games-message", problemText(error), true);
  }
}

/** Opens my games and my wins, each from its first page. */
export async function showGames() {
  tell("games-message", "");
  await Promise.all([load("games", false), load("wins", false)]);
  if (!$("games-dialog").open) $("games-dialog").showModal();
}

/** Wires the header's button and the lists' "more" buttons. */
export function wireGames() {
  $("open-games").addEventListener("click", showGames);
  $("games-more").addEventListener("click", () => load("games", true));
  $("wins-more").addEventListener("click", () => load("wins", true));
}
