// Every text of the page, in Hungarian and English, comes from the message catalogue (messages.json beside this
// file): the very file the service reads its own texts from. Placeholders {0}, {1}… take the arguments in order.
// This module owns the page's language: read it with locale(), change it only with setLocale().

const CATALOGUE = await (await fetch(new URL("messages.json", import.meta.url))).json();
export const LOCALES = Object.keys(CATALOGUE);

let current = "hu";

function fill(template, args) {
  return template.replace(/\{(\d+)\}/g, (_, index) => String(args[Number(index)]));
}

/** A text with plural forms ({ one, other }) in its form for the number n, by the language's plural rules. */
function pluralForm(language, forms, n) {
  const rule = new Intl.PluralRules(language).select(Number(n));
  return forms[rule] ?? forms.other;
}

/** The page's language now ("hu" or "en"). */
export function locale() {
  return current;
}

/** Switches the page's language (the caller re-renders). */
export function setLocale(wanted) {
  current = LOCALES.includes(wanted) ? wanted : "hu";
}

/** One of the page's texts in the given language, placeholders filled. */
export function text(language, key, ...args) {
  const template = CATALOGUE[language].page[key];
  return fill(typeof template === "string" ? template : pluralForm(language, template, args[0]), args);
}

/** One of the page's texts in the page's language. */
export function t(key, ...args) {
  return text(current, key, ...args);
}

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

export function cardParts(code) {
  const suit = code.slice(-1);
  return { rank: code.slice(0, -1), suit, symbol: SUITS[suit], red: suit === "D" || suit === "H" };
}

/** A card's name for people and screen readers from the catalogue ("queen of hearts"), never its code. */
export function cardName(code, language = current) {
  const { rank, suit } = cardParts(code);
  const names = CATALOGUE[language].cards;
  return fill(names.name, [names[suit], names[rank] || rank]);
}

const CARD_CODE = /(?<![\p{L}\p{N}])(10|[2-9AJQK])([CDHS])(?![\p{L}\p{N}])/gu;

/** A message with every card code in it ("8H", "10C+3S") said in words from the catalogue ("Eight of hearts"), for eyes and ears. */
export function inWords(message) {
  return message.replace(CARD_CODE, (code) => cardName(code)).replace(/(\S)\+(\S)/g, "$1 + $2");
}

/** Whether the page has a text of its own under key (a problem's or a feedback's plain-words version). */
export function hasText(key) {
  return Object.hasOwn(CATALOGUE[current].page, key);
}

/**
 * A feedback of the engine (its code, as the API sends it) in the page's language, its cards named in words; null
 * when the catalogue has no such text or it needs a value the page does not have.
 */
export function feedbackText(code, cards = []) {
  const template = CATALOGUE[current].engine[code];
  if (!template || (/\{cards?\}/.test(template) && !cards.length)) return null;
  if (/\{(?!cards?\})[a-z]+\}/.test(template)) return null;
  const named = cards.map((card) => cardName(card));
  return template.replace("{card}", named[0] || "").replace("{cards}", named.join(", "));
}

/** A problem's text from the service's catalogue in the page's language, its placeholders from the problem. */
export function problemText(code, problem) {
  const template = CATALOGUE[current].problems[code];
  if (!template) return null;
  const missing = [...template.matchAll(/\{([a-z_]+)\}/g)].some(([, name]) => problem[name] == null);
  return missing ? null : template.replace(/\{([a-z_]+)\}/g, (_, name) => String(problem[name]));
}

export function chooseLocale(stored) {
  if (LOCALES.includes(stored)) return stored;
  const wanted = navigator.languages || [navigator.language || "hu"];
  for (const tag of wanted) {
    const language = tag.toLowerCase().split("-")[0];
    if (LOCALES.includes(language)) return language;
  }
  return "hu";
}

export function clock(ms) {
  if (ms == null) return "0:00";
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}
