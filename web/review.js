// What the solver knows, shown to the player: the deal's par beside the move counter (getDeal's `par`, worked out
// off the request path, so read again gently while pending), a finished game's review over the replay (per step:
// could it still be won, the fewest moves left, the point of no return, the steps on a shortest line, a shortest
// continuation from any step) and a won game's certificate (its link, its JWS copied, or saved as a .jwt file).
// Every judgement is the service's: the page has no rules and computes nothing about a position.

import { ApiError } from "./api.js";
import * as state from "./state.js";
import { $ } from "./render.js";
import { inWords, t } from "./texts.js";
import { apiBase, problemText, tell, when } from "./views.js";
import { replayStep, showReplay } from "./replay.js";

const PAR_POLL_MS = 3000; // while par is pending: one read every 3 s, at most PAR_POLLS times per deal
const PAR_POLLS = 40;
const BUSY_RETRIES = 5; // a busy solver: at most this many automatic retries, each after its Retry-After

let par = { code: null, status: "pending", value: null, polls: 0, timer: null };
let review = { id: null, code: "", data: null, step: 0, timer: null, retries: 0 };

// --- Par ---------------------------------------------------------------------------------------------------------

/** The par's words beside the counter: nothing while pending or for a sealed challenge game. */
function parText() {
  if (par.status === "known") return t("parKnown", par.value);
  if (par.status === "unwinnable") return t("parUnwinnable");
  if (par.status === "unknown") return t("parUnknown");
  return "";
}

function drawPar() {
  const text = parText();
  $("par").textContent = text;
  $("par").hidden = !text;
  $("par").dataset.status = par.status;
}

async function readPar(code) {
  try {
    const { data } = await state.call("GET", `/v1/deals/${encodeURIComponent(code)}`);
    if (par.code !== code) return;
    par = { ...par, status: data.par_status, value: data.par };
  } catch {
    // par is a nicety: a failed read leaves it unsaid and is tried again at the next poll
  }
  drawPar();
  if (par.code === code && par.status === "pending" && par.polls++ < PAR_POLLS) {
    par.timer = setTimeout(() => readPar(code), PAR_POLL_MS);
  }
}

/** Follows the game on the table: a new deal's par is read (and polled while pending); a sealed one says none. */
function followPar(game) {
  const code = game ? game.code : null;
  if (code === par.code) return;
  clearTimeout(par.timer);
  par = { code, status: "pending", value: null, polls: 0, timer: null };
  drawPar();
  if (code) readPar(code);
}

// --- Review ------------------------------------------------------------------------------------------------------

function verdict(position) {
  if (position.winnable === true) return t("reviewWinnable", position.moves_left);
  if (position.winnable === false) return t("reviewLost");
  return t("reviewUndecided");
}

function stepLabel(position) {
  const what = position.operation ? inWords(moveWords(position.operation)) : t("replayDeal");
  const parts = [`${position.step}. ${what}`, verdict(position)];
  if (position.on_shortest_line) parts.push(t("reviewShortest"));
  if (position.step === review.data.point_of_no_return) parts.push(t("reviewNoReturnMark"));
  return parts.join(" · ");
}

/** A move in notation said in words: D draws, R turns the waste over, cards by their names. */
function moveWords(move) {
  if (move === "D") return t("moveDraw");
  if (move === "R") return t("moveTurn");
  return inWords(move);
}

function summary() {
  const data = review.data;
  if (data.status === "won") return t("reviewWon");
  if (data.point_of_no_return == null) return t("reviewNoPoint");
  const at = data.positions[data.point_of_no_return];
  return at.operation ? t("reviewPoint", at.step, moveWords(at.operation)) : t("reviewDealLost");
}

function stepItem(position) {
  const item = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = stepLabel(position);
  button.dataset.step = String(position.step);
  button.addEventListener("click", () => replayStep(position.step));
  item.dataset.step = String(position.step);
  item.classList.toggle("shortest", Boolean(position.on_shortest_line));
  item.classList.toggle("no-return", position.step === review.data.point_of_no_return);
  item.append(button);
  return item;
}

function drawReview() {
  const data = review.data;
  if (!data) return;
  $("review-summary").textContent = summary();
  $("review-summary").dataset.point = data.point_of_no_return == null ? "" : String(data.point_of_no_return);
  $("review-steps").replaceChildren(...data.positions.map(stepItem));
  markStep();
  $("review-cert").hidden = data.status !== "won";
}

/** The replay's step now: its verdict in words, and the list's entry marked as the current one. */
function markStep() {
  const data = review.data;
  if (!data) return;
  const position = data.positions[review.step] || data.positions[0];
  $("review-verdict").textContent = verdict(position);
  for (const button of $("review-steps").querySelectorAll("button")) {
    if (Number(button.dataset.step) === review.step) button.setAttribute("aria-current", "step");
    else button.removeAttribute("aria-current");
  }
  $("review-continue").disabled = position.winnable !== true || review.step === data.steps;
}

/** A busy solver (429/503 with Retry-After): a countdown on the review's line, then the same request again. */
function waitAndRetry(error, again) {
  clearInterval(review.timer);
  if (review.retries++ >= BUSY_RETRIES) return tell("review-message", problemText(error), true);
  let seconds = Math.max(1, Number(error.headers && error.headers.get("Retry-After")) || 1);
  tell("review-message", t("reviewBusy", seconds));
  review.timer = setInterval(() => {
    seconds -= 1;
    if (seconds > 0) return tell("review-message", t("reviewBusy", seconds));
    clearInterval(review.timer);
    again();
  }, 1000);
  return undefined;
}

const busy = (error) => error instanceof ApiError && (error.status === 429 || error.code === "solver_busy");

async function loadReview() {
  try {
    const { data } = await state.call("GET", `/v1/games/${review.id}/review`);
    review = { ...review, data, retries: 0 };
    tell("review-message", "");
    drawReview();
  } catch (error) {
    if (busy(error)) waitAndRetry(error, loadReview);
    else tell("review-message", problemText(error), true);
  }
}

/** "The shortest continuation from here": ?from=step, its moves listed in words. */
async function continueFromHere() {
  const step = review.step;
  try {
    const { data } = await state.call("GET", `/v1/games/${review.id}/review?from=${step}`);
    review.retries = 0;
    const line = (data.continuation && data.continuation.line) || [];
    $("review-line-title").textContent = line.length ? t("reviewLineFrom", step, line.length) : t("reviewNoLine", step);
    $("review-line").replaceChildren(...line.map((move) => {
      const item = document.createElement("li");
      item.textContent = moveWords(move);
      item.dataset.move = move;
      return item;
    }));
    $("review-line-box").hidden = false;
    $("review-line").dataset.from = String(step);
    tell("review-message", "");
  } catch (error) {
    if (busy(error)) waitAndRetry(error, continueFromHere);
    else tell("review-message", problemText(error), true);
  }
}

/** Opens the review of finished game ``id`` (deal ``code``, empty while sealed): the replay with the solver's view. */
export async function showReview(id, code) {
  clearInterval(review.timer);
  review = { id, code, data: null, step: 0, timer: null, retries: 0 };
  $("review-panel").hidden = false;
  $("review-summary").textContent = t("reviewLoading");
  $("review-steps").replaceChildren();
  $("review-line-box").hidden = true;
  $("review-cert").hidden = true;
  tell("review-message", "");
  tell("review-cert-message", "");
  await showReplay(id, code);
  await loadReview();
}

// --- Certificate -------------------------------------------------------------------------------------------------

async function certificate(id, line) {
  try {
    return (await state.call("GET", `/v1/games/${id}/certificate`)).data;
  } catch (error) {
    if (error instanceof ApiError && error.code === "certificate_sealed") tell(line, await sealedUntil(), true);
    else tell(line, problemText(error), true);
    return null;
  }
}

/** When a sealed challenge game's certificate becomes available: its challenge's close, in words. */
async function sealedUntil() {
  const game = state.snapshot().game;
  const challenge = game && game.challenge;
  if (!challenge) return t("certSealed");
  try {
    const { data } = await state.call("GET", `/v1/challenges/${encodeURIComponent(challenge)}`);
    return t("certSealedUntil", when(data.closes_at));
  } catch {
    return t("certSealed");
  }
}

async function copy(text, line, done) {
  try {
    await navigator.clipboard.writeText(text);
    tell(line, t(done));
  } catch {
    tell(line, t("certCopyFailed"), true);
  }
}

function download(jws, id) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([jws], { type: "application/jwt" }));
  link.download = `pyramide-certificate-${id}.jwt`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

/** The certificate's three actions in one dialog: ``prefix`` names its buttons and line, ``game`` the game's id. */
function wireCertificate(prefix, game) {
  const line = `${prefix}-cert-message`;
  $(`${prefix}-cert-link`).addEventListener("click", () => {
    const url = new URL(`/v1/games/${game()}/certificate`, apiBase() || location.origin).href;
    copy(url, line, "certLinkCopied");
  });
  $(`${prefix}-cert-copy`).addEventListener("click", async () => {
    const data = await certificate(game(), line);
    if (data) copy(data.certificate, line, "certCopied");
  });
  $(`${prefix}-cert-download`).addEventListener("click", async () => {
    const data = await certificate(game(), line);
    if (!data) return;
    download(data.certificate, game());
    tell(line, t("certDownloaded"));
  });
}

/** The end dialog of a game just finished: its review, and for a win its certificate (or when it will be given). */
async function ending(game) {
  tell("end-cert-message", "");
  $("end-review").hidden = game.status === "in_progress";
  const won = game.status === "won";
  const sealed = Boolean(game.challenge && !game.code);
  $("end-cert").hidden = !won || sealed;
  if (won && sealed) tell("end-cert-message", await sealedUntil());
}

/** Wires par beside the counter, the review's controls, the end dialog's review and certificate actions. */
export function wireReview() {
  state.subscribe((now, event) => {
    if (event.kind !== "game") return;
    followPar(now.game);
    const before = event.before;
    if (before && before.id === now.game.id && before.status !== now.game.status) ending(now.game);
  });
  $("end-review").addEventListener("click", () => {
    $("end-dialog").close("review");
    const game = state.snapshot().game;
    showReview(game.id, game.code || "");
  });
  $("replay-dialog").addEventListener("replay:step", (event) => {
    review.step = event.detail.step;
    markStep();
  });
  $("replay-dialog").addEventListener("close", () => {
    clearInterval(review.timer);
    review = { ...review, id: null, data: null };
    $("review-panel").hidden = true;
  });
  $("review-continue").addEventListener("click", continueFromHere);
  wireCertificate("end", () => state.snapshot().game.id);
  wireCertificate("review", () => review.id);
  $("language").addEventListener("change", () => {
    drawPar();
    drawReview();
  });
}
