// The one game and session state of the page, owned here: other modules read it with snapshot() and change it only
// through the functions below (each is a request to the API, whose answer becomes the new state). Subscribers hear
// every change with what happened: { kind: "game", before } after a new snapshot, { kind: "hint", hint } after a
// hint, { kind: "say", message, error } for a message to show, { kind: "busy", busy } when a request starts or
// ends, { kind: "wait", action, seconds } when the service asks the page to wait (a rate limit). A message is never
// a finished string but what it says: { key, args } (a text of the page), { feedback, card } (the engine's feedback,
// by code) or { problem } (an error the service answered), so that the page can say it again in another language.

import { ApiError } from "./api.js";
import { follow } from "./live.js";

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
let followed = { id: null, stop: () => undefined }; // the game whose live stream the page reads
let pushed = null; // a newer snapshot the stream brought while a request was in flight, shown when it ends
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

/** Shows a message (see above; null clears the line) to whoever listens. */
export function say(message, error = false) {
  for (const listener of listeners) listener(current, { kind: "say", message, error });
}

/** A text of the page as a message. */
export const text = (key, ...args) => ({ key, args });

/** The cards a feedback speaks of: the one drawn, or the ones the tap or move named (a pair's first was selected). */
function feedbackCards(code, game, before, named) {
  if (code === "drawn") return game.waste.top ? [game.waste.top] : [];
  const earlier = before && before.selected && code === "removed" ? [before.selected] : [];
  return [...earlier, ...named].filter((card, index, all) => card && all.indexOf(card) === index);
}

/**
 * A snapshot of the game on the table that another tab or device made (from its live stream, or a poll): shown when
 * its version is newer than the one shown. While a request of this page is in flight it waits (the tap's answer
 * comes first), then is shown if it is still newer.
 */
function adopt(game) {
  if (!current.game || game.id !== current.game.id || game.version <= current.game.version) return;
  if (busy) {
    if (!pushed || game.version > pushed.version) pushed = game;
    return;
  }
  pushed = null;
  const before = current.game;
  update({ game, etag: `"${game.version}"`, receivedAt: Date.now(), hinted: [] }, { kind: "game", before });
  watch(game);
}

/** Follows the game on the table live (its stream, else polling its GET) while it can still change. */
function watch(game) {
  const changing = !outcome(game.status).final;
  if (followed.id === game.id && changing) return;
  followed.stop();
  followed = { id: null, stop: () => undefined };
  if (!changing) return;
  const path = `/v1/games/${encodeURIComponent(game.id)}`;
  const stop = follow(api, `${path}/events`, { name: "snapshot", onData: adopt, poll: async () => (await api.get(path)).data });
  followed = { id: game.id, stop };
}

function show(result, named = []) {
  const before = current.game;
  api.remember("game", result.data.id);
  update({ game: result.data, etag: result.etag, receivedAt: Date.now(), hinted: [] }, { kind: "game", before });
  watch(result.data);
  const feedback = result.data.feedback;
  if (feedback && feedback.message) {
    const cards = feedbackCards(feedback.code, result.data, before, named);
    say({ feedback: feedback.code, cards, fallback: feedback.message });
  }
}

/** Tells every subscriber whether a request runs (the board is aria-busy meanwhile). */
function setBusy(value) {
  busy = value;
  for (const listener of listeners) listener(current, { kind: "busy", busy });
  if (busy || !pushed) return;
  const waiting = pushed;
  pushed = null;
  adopt(waiting);
}

/** The seconds a 429's Retry-After asks for (at least one). */
function retryAfter(error) {
  return Math.max(1, Number.parseInt(error.headers?.get("Retry-After") ?? "", 10) || 1);
}

/** Runs one request at a time; a failure is said (a rate limit as a calm wait for the action that met it). */
export async function guarded(action, name = "other") {
  if (busy) return undefined;
  setBusy(true);
  try {
    return await action();
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) {
      update({}, { kind: "wait", action: name, seconds: retryAfter(error) });
    } else {
      say(error instanceof ApiError ? { problem: error.problem } : text("failed"), true);
    }
    return undefined;
  } finally {
    setBusy(false);
  }
}

/** GETs a resource for a view (stats, boards, the challenge), inside guarded(): its data, or undefined on failure. */
export function fetchData(path) {
  return guarded(async () => (await api.get(path)).data);
}

/**
 * Sends a change of the game; when another tab changed it first (412), reads the game as it is now and sends the
 * change once more, silently: only a second failure is said.
 */
async function change(path, body, named) {
  say(null);
  try {
    show(await api.post(`/v1/games/${current.game.id}/${path}`, body, current.etag), named);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 412) throw error;
    show(await api.get(`/v1/games/${current.game.id}`));
    show(await api.post(`/v1/games/${current.game.id}/${path}`, body, current.etag), named);
  }
}

/** Follows a public resource live (live.js): its stream at ``${path}/events``, else its GET every few seconds;
 * onData gets each state. Returns the function that stops it (the view closed). */
export function followPublic(path, name, onData) {
  return follow(api, `${path}/events`, { name, onData, auth: false, poll: async () => (await api.get(path)).data });
}

/** Sends one request of a view (settings, lists, a replay) as it is: its answer, or the ApiError it throws. */
export async function call(method, path, body) {
  return api.send(method, path, { body });
}

/** Starts afresh as a new player, after the player's data was erased: the old token and game are forgotten. */
export async function forget() {
  followed.stop();
  followed = { id: null, stop: () => undefined };
  api.token = null;
  api.remember("game", null);
  current = Object.freeze({ ...current, game: null, etag: null, hinted: [] });
  await boot(false);
}

export function tap(body) {
  return guarded(() => change("taps", body, body.card ? [body.card] : []), "tap");
}

export function move(body) {
  return guarded(() => change("moves", body, body.cards || []), body.type === "undo" ? "undo" : "tap");
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
    const lost = data.winnable === false;
    say(text(!notation ? (lost ? "hintLost" : "hintNone") : data.winnable === true ? "hintWin" : lost ? "hintNoWin" : "hintUnknown"));
  }, "hint");
}

/**
 * Deals a new game. A refusal of the request itself (422) is said, or, with keepRefusal (a form that shows it beside
 * its field), returned instead: the promise resolves to that ApiError, else to null.
 */
export async function deal(body, { keepRefusal = false } = {}) {
  let refused = null;
  await guarded(async () => {
    say(text("loading")); // a winnable-only deal or a challenge's first use waits for the solver
    try {
      show(await api.post("/v1/games", body));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 422) throw error;
      if (!keepRefusal) throw error;
      refused = error;
      say(null);
      return;
    }
    if (!current.game.feedback) say(null);
  }, "deal");
  return refused;
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
    if (!current.game.feedback) say(null);
  } catch (error) {
    if (again && error instanceof ApiError && error.status === 401) {
      api.token = null; // the player is gone (erased, or another deployment): start afresh
      return boot(false);
    }
    say(error instanceof ApiError ? { problem: error.problem } : text("failed"), true);
  }
  return undefined;
}
