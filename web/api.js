// The Pyramide API as a third-party front end uses it: only public routes, the bearer token in localStorage,
// an Idempotency-Key on every POST (the same one when a request is retried after a network failure), and If-Match
// with the game's ETag on every change to a game.

export class ApiError extends Error {
  constructor(status, problem, headers = null) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.headers = headers;
    this.problem = problem;
    this.code = problem.code;
  }
}

function uuid() {
  if (globalThis.crypto && crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class Api {
  constructor(base, locale) {
    this.base = base.replace(/\/$/, "");
    this.locale = locale;
    this.key = `pyramide:${this.base || location.origin}`;
  }

  get token() {
    return localStorage.getItem(`${this.key}:token`);
  }

  set token(value) {
    if (value) localStorage.setItem(`${this.key}:token`, value);
    else localStorage.removeItem(`${this.key}:token`);
  }

  remember(name, value) {
    if (value == null) localStorage.removeItem(`${this.key}:${name}`);
    else localStorage.setItem(`${this.key}:${name}`, value);
  }

  recall(name) {
    return localStorage.getItem(`${this.key}:${name}`);
  }

  async ensurePlayer() {
    if (this.token) return;
    const { data } = await this.send("POST", "/v1/players", { body: { locale: this.locale, explain_errors: true }, auth: false });
    this.token = data.token;
  }

  async send(method, path, { body, etag, auth = true } = {}) {
    const headers = { "Accept-Language": this.locale };
    if (auth && this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method === "POST") headers["Idempotency-Key"] = uuid();
    if (etag) headers["If-Match"] = etag;
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
    let response;
    try {
      response = await fetch(this.base + path, init);
    } catch {
      response = await fetch(this.base + path, init); // once more, with the same Idempotency-Key
    }
    const type = response.headers.get("Content-Type") || "";
    const data = response.status === 204 ? null : type.includes("json") ? await response.json() : await response.text();
    if (!response.ok) throw new ApiError(response.status, typeof data === "object" && data ? data : {}, response.headers);
    return { data, etag: response.headers.get("ETag"), status: response.status };
  }

  get(path) {
    return this.send("GET", path);
  }

  post(path, body, etag) {
    return this.send("POST", path, { body, etag });
  }
}
