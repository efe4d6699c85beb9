// Live streams (issue 47): a resource's state as the service pushes it (Server-Sent Events), read with fetch() and a
// streamed body, since EventSource cannot send the Authorization header a game's stream needs. A stream that ends
// (the service's PYRAMIDE_STREAM_MAX_S, a restart, a network error) is opened again with Last-Event-ID, after a
// back-off that doubles; when streams keep failing, or the service answers 429 too_many_streams, the view polls the
// resource's GET every few seconds instead and tries a stream again later. Everything stops when the view closes.

const POLL_MS = 3000; // how often a view without a stream reads its resource
const BACKOFF_MS = 500; // the first wait before a stream is opened again; doubles with each failure in a row
const BACKOFF_MAX_MS = 30000;
const FAILURES_BEFORE_POLLING = 3;
const POLL_BEFORE_RETRY_MS = 60000; // how long a view polls before it tries a stream again

/** Resolves after ms, or at once when signal aborts. */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const stop = () => { clearTimeout(timer); resolve(); };
    const timer = setTimeout(() => { signal.removeEventListener("abort", stop); resolve(); }, ms);
    signal.addEventListener("abort", stop, { once: true });
  });
}

/**
 * Parses an event stream's text as it arrives: feed(chunk) calls onEvent({ id, event, data }) for each complete
 * event (a blank line ends it; `:` lines are comments, such as the service's `: ping` heartbeat). Multi-line data is
 * joined with "\n", as the Server-Sent Events standard says.
 */
export function eventParser(onEvent) {
  let buffer = "";
  let event = { id: null, event: "message", data: [] };
  function line(text) {
    if (text === "") {
      if (event.data.length) onEvent({ id: event.id, event: event.event, data: event.data.join("\n") });
      event = { id: event.id, event: "message", data: [] };
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "id") event.id = value;
    else if (field === "event") event.event = value;
    else if (field === "data") event.data.push(value);
  }
  return function feed(chunk) {
    buffer += chunk;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const text of lines) line(text);
  };
}

/** An error that says the stream was answered with a status other than 200 (and its Retry-After, in seconds). */
class Refused extends Error {
  constructor(status, retryAfter) {
    super(`HTTP ${status}`);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** Reads one stream until it ends; each event's id is remembered in last.id for the next Last-Event-ID. */
async function readStream(api, path, { auth, name, onData, signal, last, opened }) {
  const headers = { Accept: "text/event-stream", "Accept-Language": api.locale };
  if (auth && api.token) headers.Authorization = `Bearer ${api.token}`;
  if (last.id != null) headers["Last-Event-ID"] = last.id;
  const response = await fetch(api.base + path, { headers, signal, cache: "no-store" });
  if (!response.ok || !response.body) {
    throw new Refused(response.status, Number.parseInt(response.headers.get("Retry-After") ?? "", 10) || 0);
  }
  opened();
  const decoder = new TextDecoder();
  const feed = eventParser((event) => {
    if (event.id != null) last.id = event.id;
    if (event.event === name) onData(JSON.parse(event.data));
  });
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    feed(decoder.decode(value, { stream: true }));
  }
}

/** Polls ``poll()`` every few seconds for ``ms`` (at once first), handing each answer to onData; errors are skipped. */
async function pollFor(ms, poll, onData, signal) {
  const until = Date.now() + ms;
  while (!signal.aborted && Date.now() < until) {
    try {
      onData(await poll());
    } catch {
      // the next poll tries again; the view keeps what it shows
    }
    await sleep(POLL_MS, signal);
  }
}

/**
 * Follows a resource live: path is its stream (`…/events`), name the event that carries its state (`snapshot`,
 * `board`), onData(state) gets each state, poll() reads the resource without a stream (its GET). auth: whether the
 * stream needs the player's token. A 4xx other than 429 ends the following (the resource is gone or not the
 * player's). Returns the function that stops it all (the view closed).
 */
export function follow(api, path, { name, onData, poll, auth = true }) {
  const controller = new AbortController();
  const signal = controller.signal;
  const last = { id: null };
  (async () => {
    let failures = 0;
    while (!signal.aborted) {
      let wait = BACKOFF_MS; // the service ended the stream (its maximum duration): resume soon
      try {
        await readStream(api, path, { auth, name, onData, signal, last, opened: () => { failures = 0; } });
      } catch (error) {
        if (signal.aborted) return;
        const status = error instanceof Refused ? error.status : 0;
        if (status >= 400 && status < 500 && status !== 429) return;
        failures += 1;
        if (status === 429 || failures >= FAILURES_BEFORE_POLLING) {
          await pollFor(Math.max(POLL_BEFORE_RETRY_MS, (error.retryAfter || 0) * 1000), poll, onData, signal);
          wait = 0;
        } else wait = Math.min(BACKOFF_MAX_MS, BACKOFF_MS * 2 ** (failures - 1)) * (0.75 + Math.random() / 2);
      }
      await sleep(wait, signal);
    }
  })();
  return () => controller.abort();
}
