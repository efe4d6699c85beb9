// The one game and session state of the page, owned here: other modules read it with snapshot() and change it only
// through the functions below (each is a request to the API, whose answer becomes the new state). Subscribers hear
// every change with what happened: { kind: "game", before } after a new snapshot, { kind: "hint", hint } after a
// hint, { kind: "say", text, error } for a message to show.

import { ApiError } from "./api.js";
import { t } from "./texts.js";

// What each status the API sends means here, read in this one place: whether the game is kept for good (no hint,
// no abandoning), whether its clock runs, and which end of play it shows (lists and challenges say "lost" for
// "stuck").
const STATUS = {
  in_progress: { final: false, running: true, end: null },
  won: { final: true, running: false, end: "won" },
  stuck: { final: false, running: false, end: "stuck" },
  lost: { final: false, running: false, end: "stuck" },
  abandoned: { final: true, running: false, end: null },
};
export const outcome = (status) => STATUS[status] || { final: false, running: false, end: null };

let current = Object.freeze({ game: null, etag: null, receivedAt: 0, hinted: [], catalogue: null, challenge: null });
let busy = false;
let api = null;
const listeners = new Set();

/** The state now (frozen: change it only through this module's functions). */
export function snapshot() {
  return current;
}

/** Calls listener(state, event) after every change; returns the function that stops it. */
export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The API client every request goes through (app.js connects it once). */
export function connect(client) {
  api = client;
}

function update(changes, event) {
  current = Object.freeze({ ...current, ...changes });
  for (const listener of listeners) listener(current, event);
}

/** Shows a message (feedback, an error) to whoever listens. */
export function say(text, error = false) {
  for (const listener of listeners) listener(current, { kind: "say", text: text || "", error });
}

function show(result) {
  const before = current.game;
  api.remember("game", result.data.id);
  update({ game: result.data, etag: result.etag, receivedAt: Date.now(), hinted: [] }, { kind: "game", before });
  const feedback = result.data.feedback;
  if (feedback && feedback.message) say(feedback.message);
}

/** Runs one request at a time; a failure is said, a 412 shows the game as it is now (changed elsewhere). */
export async function guarded(action) {
  if (busy) return undefined;
  busy = true;
  try {
    return await action();
  } catch (error) {
    if (error instanceof ApiError && error.status === 412 && current.game) {
      show(await api.get(`/v1/games/${current.game.id}`));
    }
    say(error instanceof ApiError ? error.message : t("failed"), true);
    return undefined;
  } finally {
    busy = false;
  }
}

/** GETs a resource for a view (stats, boards, the challenge), inside guarded(): its data, or undefined on failure. */
export function fetchData(path) {
  return guarded(async () => (await api.get(path)).data);
}

/** Sends one request of a view (settings, lists, a replay) as it is: its answer, or the ApiError it throws. */
export async function call(method, path, body) {
  return api.send(method, path, { body });
}

/** Starts afresh as a new player, after the player's data was erased: the old token and game are forgotten. */
export async function forget() {
  api.token = null;
  api.remember("game", null);
  current = Object.freeze({ ...current, game: null, etag: null, hinted: [] });
  await boot(false);
}

export function tap(body) {
  return guarded(async () => {
    say("");
    show(await api.post(`/v1/games/${current.game.id}/taps`, body, current.etag));
  });
}

export function move(body) {
  return guarded(async () => {
    say("");
    show(await api.post(`/v1/games/${current.game.id}/moves`, body, current.etag));
  });
}

export function abandon() {
  return guarded(async () => show(await api.post(`/v1/games/${current.game.id}/abandon`, undefined, current.etag)));
}

export function open(id) {
  return guarded(async () => show(await api.get(`/v1/games/${id}`)));
}

export function hint() {
  return guarded(async () => {
    const { data } = await api.get(`/v1/games/${current.game.id}/hint`);
    const notation = data.move;
    const hinted = !notation ? [] : notation === "D" || notation === "R" ? ["stock"] : notation.split("+");
    update({ hinted }, { kind: "hint", hint: data });
    say(!notation ? t("hintNone") : data.winnable === true ? t("hintWin") : data.winnable === false ? t("hintNoWin") : t("hintUnknown"));
  });
}

export async function deal(body) {
  await guarded(async () => {
    say(t("loading")); // a winnable-only deal or a challenge's first use waits for the solver
    show(await api.post("/v1/games", body));
    if (!current.game.feedback) say("");
  });
}

export function setChallenge(challenge) {
  update({ challenge }, { kind: "challenge" });
}

export async function loadCatalogue() {
  const { data } = await api.get("/v1/rules");
  update({ catalogue: data }, { kind: "catalogue" });
  return data;
}

async function resume() {
  const id = api.recall("game");
  if (id) {
    try {
      show(await api.get(`/v1/games/${id}`));
      return;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
  }
  await deal({ explain_errors: true });
}

/** The first load: a player, the rule catalogue, then the game in progress or a new deal. */
export async function boot(again = true) {
  try {
    await api.ensurePlayer();
    await loadCatalogue();
    await resume();
    if (!current.game.feedback) say("");
  } catch (error) {
    if (again && error instanceof ApiError && error.status === 401) {
      api.token = null; // the player is gone (erased, or another deployment): start afresh
      return boot(false);
    }
    say(error instanceof ApiError ? error.message : t("failed"), true);
  }
  return undefined;
}
