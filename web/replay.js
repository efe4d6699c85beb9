// The replay of a finished game, move by move: each step's board comes from the service (getGamePosition, the
// engine replaying the record), shown read-only; the page computes no position itself.

import * as state from "./state.js";
import { $, openModal } from "./render.js";
import { cardName, cardParts, t } from "./texts.js";
import { playAgain, problemText, tell } from "./views.js";

let shown = { id: null, code: "", step: 0, steps: 0, position: null };

function cardFace(code) {
  const { rank, symbol, red } = cardParts(code);
  const face = document.createElement("span");
  face.className = `replay-card${red ? " red" : ""}`;
  face.setAttribute("role", "img");
  face.setAttribute("aria-label", cardName(code));
  face.dataset.card = code;
  face.textContent = `${rank}${symbol}`;
  return face;
}

function drawPyramid(position) {
  const rows = [];
  for (let number = 1; number <= 7; number++) {
    const line = document.createElement("div");
    line.className = "replay-row";
    for (const slot of position.pyramid.filter((s) => s.row === number)) {
      if (slot.card) line.append(cardFace(slot.card));
      else {
        const gap = document.createElement("span");
        gap.className = "replay-gap";
        line.append(gap);
      }
    }
    rows.push(line);
  }
  $("replay-pyramid").replaceChildren(...rows);
}

function draw() {
  const position = shown.position;
  if (!position) return;
  drawPyramid(position);
  const top = position.waste.top ? cardName(position.waste.top) : t("replayNoTop");
  $("replay-piles").textContent = t("replayPiles", position.stock.count, position.waste.count, top);
  $("replay-step").textContent = t("replayStep", position.step, position.steps);
  $("replay-operation").textContent = position.operation ? t("replayOperation", position.operation) : t("replayDeal");
  $("replay-score").textContent = position.score;
  $("replay-moves").textContent = position.moves;
  $("replay-board").dataset.step = String(position.step);
  $("replay-board").dataset.status = position.status;
  $("replay-start").disabled = $("replay-back").disabled = position.step === 0;
  $("replay-forward").disabled = $("replay-end").disabled = position.step === position.steps;
  $("replay-title").textContent = t("replayTitle", shown.code || t("sealed"));
  $("replay-again").hidden = !shown.code;
}

async function go(step) {
  try {
    const { data } = await state.call("GET", `/v1/games/${shown.id}/positions/${step}`);
    shown = { ...shown, step: data.step, steps: data.steps, position: data };
    tell("replay-message", "");
    draw();
    $("replay-dialog").dispatchEvent(new CustomEvent("replay:step", { detail: { step: data.step } })); // review.js
  } catch (error) {
    tell("replay-message", problemText(error), true);
  }
}

/** Shows step ``step`` of the replay that is open (the review's list of steps). */
export function replayStep(step) {
  return go(step);
}

/** Opens the replay of game ``id`` (deal ``code``, empty while sealed) at its deal. */
export async function showReplay(id, code) {
  shown = { id, code, step: 0, steps: 0, position: null };
  await go(0);
  const dialog = $("replay-dialog");
  if (!dialog.open) openModal(dialog);
  $("replay-forward").focus();
}

function keep(button, step) {
  go(step).then(() => {
    if (!button.disabled) button.focus();
    else $("replay-forward").disabled ? $("replay-back").focus() : $("replay-forward").focus();
  });
}

/** Wires the replay's steps, its keys (arrows, Home, End) and "play this deal again". */
export function wireReplay() {
  $("replay-start").addEventListener("click", (e) => keep(e.currentTarget, 0));
  $("replay-back").addEventListener("click", (e) => keep(e.currentTarget, Math.max(0, shown.step - 1)));
  $("replay-forward").addEventListener("click", (e) => keep(e.currentTarget, Math.min(shown.steps, shown.step + 1)));
  $("replay-end").addEventListener("click", (e) => keep(e.currentTarget, shown.steps));
  $("replay-dialog").addEventListener("close", () => {
    if ($("replay-dialog").returnValue !== "again") return;
    if ($("games-dialog").open) $("games-dialog").close();
    playAgain(shown.code);
  });
  $("language").addEventListener("change", draw); // after app.js has switched the language: the same view again
}
