// The reference front end: renders the API's snapshots and sends the player's taps; every rule is the service's.

import { Api, ApiError } from "./api.js";
import { cardName, cardParts, chooseLocale, clock, text } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const apiBase = params.get("api") || document.querySelector('meta[name="pyramide-api"]').content || "";
let locale = chooseLocale(localStorage.getItem("pyramide:locale"));
const api = new Api(apiBase, locale);
const state = { game: null, etag: null, receivedAt: 0, hinted: [], catalogue: null, busy: false };

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
const outcome = (status) => STATUS[status] || { final: false, running: false, end: null };

const t = (key, ...args) => text(locale, key, ...args);

function applyTexts() {
  document.documentElement.lang = locale;
  $("language").value = locale;
  for (const element of document.querySelectorAll("[data-text]")) element.textContent = t(element.dataset.text);
  document.title = `Pyramide — ${t("title")}`;
}

function say(text, error = false) {
  const feedback = $("feedback");
  feedback.textContent = text || "";
  feedback.classList.toggle("error", error);
}

function cardButton(code, { free = true, slotLabel = "" } = {}) {
  const { rank, symbol, red } = cardParts(code);
  const button = document.createElement("button");
  button.type = "button";
  button.className = `card${red ? " red" : ""}${free ? "" : " covered"}`;
  button.dataset.card = code;
  const selected = state.game && state.game.selected === code;
  button.setAttribute("aria-pressed", String(selected));
  const notes = [slotLabel, free ? "" : t("covered")].filter(Boolean).join(", ");
  button.setAttribute("aria-label", notes ? `${cardName(code, locale)} (${notes})` : cardName(code, locale));
  button.innerHTML = `<span class="rank"></span><span class="suit" aria-hidden="true"></span>`;
  button.firstChild.textContent = rank;
  button.lastChild.textContent = symbol;
  if (state.hinted.includes(code)) button.classList.add("hinted");
  button.addEventListener("click", () => tap({ card: code }));
  return button;
}

function renderPyramid(game) {
  const pyramid = $("pyramid");
  pyramid.replaceChildren();
  for (let row = 1; row <= 7; row++) {
    const line = document.createElement("div");
    line.className = "row";
    line.setAttribute("role", "group");
    line.setAttribute("aria-label", t("row", row));
    for (const slot of game.pyramid.filter((s) => s.row === row)) {
      const place = document.createElement("div");
      place.className = "slot";
      if (slot.card) place.append(cardButton(slot.card, { free: slot.free }));
      line.append(place);
    }
    pyramid.append(line);
  }
}

function renderPiles(game) {
  const stock = $("stock");
  const count = game.stock.count;
  stock.textContent = count ? String(count) : "↻";
  stock.classList.toggle("empty", count === 0);
  stock.classList.toggle("hinted", state.hinted.includes("stock"));
  const canTurn = count === 0 && game.waste.count > 0 && game.recycles.left !== 0;
  stock.setAttribute("aria-label", count ? t("stockCards", count) : canTurn ? t("stockTurn") : t("stockEmpty"));
  stock.disabled = count === 0 && !canTurn;
  const top = $("waste-top");
  top.replaceChildren();
  if (game.waste.top) top.append(cardButton(game.waste.top, { slotLabel: t("waste") }));
  $("waste-count").textContent = `${t("waste")}: ${t("wasteCount", game.waste.count)}`;
}

function render() {
  const game = state.game;
  if (!game) return;
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.card : null;
  renderPyramid(game);
  renderPiles(game);
  $("score").textContent = game.score;
  $("moves").textContent = game.moves;
  $("code").textContent = game.code || `${game.challenge} (${t("sealed")})`;
  $("copy-code").disabled = !game.code;
  $("undo").disabled = game.undo_available === 0;
  const over = outcome(game.status).final;
  $("hint").disabled = over || Boolean(game.challenge && !game.code);
  $("abandon").disabled = over;
  tick();
  if (focused) refocus(focused);
}

function refocus(card) {
  const same = document.querySelector(`[data-card="${card}"]`);
  const next = same || document.querySelector(".card:not(.covered)[data-card]") || $("stock");
  next.focus();
}

function tick() {
  const game = state.game;
  if (!game) return;
  let elapsed = game.elapsed_ms;
  if (elapsed != null && outcome(game.status).running) elapsed += Date.now() - state.receivedAt;
  $("time").textContent = clock(elapsed);
}

function show(result) {
  const before = state.game;
  state.game = result.data;
  state.etag = result.etag;
  state.receivedAt = Date.now();
  state.hinted = [];
  api.remember("game", state.game.id);
  render();
  const feedback = state.game.feedback;
  if (feedback && feedback.message) say(feedback.message);
  if (before && before.id === state.game.id && before.status !== state.game.status) ending();
}

function ending() {
  const game = state.game;
  const end = outcome(game.status).end;
  if (!end) return;
  $("end-title").textContent = t(end);
  $("end-summary").textContent = t("wonSummary", game.score, game.moves, clock(game.elapsed_ms));
  $("end-undo").hidden = end !== "stuck";
  $("end-dialog").showModal();
}

async function guarded(action) {
  if (state.busy) return;
  state.busy = true;
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiError && error.status === 412 && state.game) {
      show(await api.get(`/v1/games/${state.game.id}`)); // changed elsewhere: show it as it is now
    }
    say(error instanceof ApiError ? error.message : t("failed"), true);
  } finally {
    state.busy = false;
  }
}

function tap(body) {
  return guarded(async () => {
    say("");
    show(await api.post(`/v1/games/${state.game.id}/taps`, body, state.etag));
  });
}

function move(body) {
  return guarded(async () => {
    say("");
    show(await api.post(`/v1/games/${state.game.id}/moves`, body, state.etag));
  });
}

function hint() {
  return guarded(async () => {
    const { data } = await api.get(`/v1/games/${state.game.id}/hint`);
    const notation = data.move;
    state.hinted = !notation ? [] : notation === "D" || notation === "R" ? ["stock"] : notation.split("+");
    render();
    say(!notation ? t("hintNone") : data.winnable === true ? t("hintWin") : data.winnable === false ? t("hintNoWin") : t("hintUnknown"));
  });
}

async function deal(body) {
  await guarded(async () => {
    say(t("loading")); // a winnable-only deal or a challenge's first use waits for the solver
    show(await api.post("/v1/games", body));
    if (!state.game.feedback) say("");
  });
}

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

async function loadCatalogue() {
  const { data } = await api.get("/v1/rules");
  state.catalogue = data;
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

async function showStats() {
  await guarded(async () => {
    const { data } = await api.get("/v1/players/me/stats");
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
  });
}

async function showBoard(path, title, verified) {
  await guarded(async () => {
    const { data } = await api.get(path);
    $("board-title").textContent = title;
    $("board-note").textContent = verified ? t("verified") : t("unverified");
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
    $("board-dialog").showModal();
  });
}

function gameBoard() {
  const game = state.game;
  if (game && game.challenge) return showChallengeBoard(game.challenge);
  if (game && game.code) return showBoard(`/v1/leaderboards/${encodeURIComponent(game.code)}`, `${t("leaderboard")}: ${game.code}`, false);
  return undefined;
}

function showChallengeBoard(id) {
  return showBoard(`/v1/challenges/${encodeURIComponent(id)}/leaderboard`, `${t("challenge")}: ${id}`, true);
}

async function showChallenge() {
  await guarded(async () => {
    const preset = $("challenge-preset").value || "N";
    const { data } = await api.get(`/v1/challenges/current?rules=${encodeURIComponent(preset)}`);
    state.challenge = data;
    const closes = new Date(data.closes_at).toLocaleString(locale === "hu" ? "hu-HU" : "en-GB");
    $("challenge-info").textContent = `${t("challengeOf", data.id)} · ${t("closesAt", closes)} · ${t("playersCount", data.players)}`;
    const you = data.you;
    const playing = Boolean(you && you.status && outcome(you.status).running);
    $("challenge-you").textContent = !you ? "" : you.rank ? t("yourRank", you.rank) : playing ? t("inProgress") : t("challengePlayed");
    const start = $("challenge-start");
    start.textContent = playing ? t("continueChallenge") : t("startChallenge");
    start.disabled = Boolean(you && !playing);
    if (!$("challenge-dialog").open) $("challenge-dialog").showModal();
  });
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

function wire() {
  $("language").addEventListener("change", async (event) => {
    locale = event.target.value;
    api.locale = locale;
    localStorage.setItem("pyramide:locale", locale);
    applyTexts();
    render();
    await loadCatalogue().catch(() => undefined);
  });
  $("stock").addEventListener("click", () => tap({ target: "stock" }));
  $("undo").addEventListener("click", () => move({ type: "undo" }));
  $("hint").addEventListener("click", hint);
  $("abandon").addEventListener("click", () => {
    if (!window.confirm(t("abandonConfirm"))) return;
    guarded(async () => show(await api.post(`/v1/games/${state.game.id}/abandon`, undefined, state.etag)));
  });
  $("new-game").addEventListener("click", () => $("new-game-dialog").showModal());
  $("open-stats").addEventListener("click", showStats);
  $("open-board").addEventListener("click", gameBoard);
  $("open-challenge").addEventListener("click", showChallenge);
  $("challenge-preset").addEventListener("change", showChallenge);
  $("copy-code").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(state.game.code);
      say(t("copied"));
    } catch {
      say(state.game.code);
    }
  });
  $("new-game-dialog").addEventListener("close", () => {
    const choice = $("new-game-dialog").returnValue;
    const explain_errors = $("explain-errors").checked;
    if (choice === "deal") deal({ rules: rulesFromForm(), winnable_only: $("winnable-only").checked, explain_errors });
    if (choice === "code" && $("paste-code").value.trim()) deal({ code: $("paste-code").value.trim(), explain_errors });
  });
  $("end-dialog").addEventListener("close", () => {
    const choice = $("end-dialog").returnValue;
    if (choice === "new") $("new-game-dialog").showModal();
    if (choice === "undo") move({ type: "undo" });
    if (choice === "board") gameBoard();
  });
  $("challenge-dialog").addEventListener("close", () => {
    const choice = $("challenge-dialog").returnValue;
    const challenge = state.challenge;
    if (!challenge) return;
    if (choice === "start" && challenge.you) guarded(async () => show(await api.get(`/v1/games/${challenge.you.game_id}`)));
    else if (choice === "start") deal({ challenge: challenge.id, explain_errors: $("explain-errors").checked });
    if (choice === "board") showChallengeBoard(challenge.id);
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, dialog") || event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key.toLowerCase();
    if (key === "d" && !$("stock").disabled) tap({ target: "stock" });
    else if (key === "u" && !$("undo").disabled) move({ type: "undo" });
    else if (key === "h" && !$("hint").disabled) hint();
  });
  setInterval(tick, 1000);
}

async function boot(again = true) {
  try {
    await api.ensurePlayer();
    await loadCatalogue();
    await resume();
    if (!state.game.feedback) say("");
  } catch (error) {
    if (again && error instanceof ApiError && error.status === 401) {
      api.token = null; // the player is gone (erased, or another deployment): start afresh
      return boot(false);
    }
    say(error instanceof ApiError ? error.message : t("failed"), true);
  }
  document.body.dataset.ready = "true";
  return undefined;
}

applyTexts();
wire();
say(t("loading"));
boot();
