// Every text of the page, in Hungarian and English, comes from the message catalogue (messages.json beside this
// file): the very file the service reads its own texts from. Placeholders {0}, {1}… take the arguments in order.

const CATALOGUE = await (await fetch(new URL("messages.json", import.meta.url))).json();
export const LOCALES = Object.keys(CATALOGUE);

function fill(template, args) {
  return template.replace(/\{(\d+)\}/g, (_, index) => String(args[Number(index)]));
}

export function text(locale, key, ...args) {
  return fill(CATALOGUE[locale].page[key], args);
}

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

export function cardParts(code) {
  const suit = code.slice(-1);
  return { rank: code.slice(0, -1), suit, symbol: SUITS[suit], red: suit === "D" || suit === "H" };
}

export function cardName(code, locale) {
  const { rank, suit } = cardParts(code);
  const names = CATALOGUE[locale].cards;
  return fill(names.name, [names[suit], names[rank] || rank]);
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
