// Every text of the page, in Hungarian and English; the card names as a screen reader says them.

export const TEXTS = {
  hu: {
    title: "Piramis pasziánsz",
    language: "Nyelv",
    score: "Pontszám",
    moves: "Lépések",
    time: "Idő",
    code: "Játszmakód",
    copy: "Másolás",
    copied: "A kód a vágólapra került",
    undo: "Visszavonás",
    hint: "Tipp",
    newGame: "Új játék",
    challenge: "Napi kihívás",
    stats: "Statisztika",
    leaderboard: "Ranglista",
    stock: "Húzópakli",
    stockCards: (n) => `Húzópakli, ${n} lap — húzás`,
    stockTurn: "Húzópakli üres — a dobópakli újraforgatása",
    stockEmpty: "Húzópakli üres",
    waste: "Dobópakli",
    wasteCount: (n) => `${n} lap`,
    pyramid: "Piramis",
    row: (n) => `${n}. sor`,
    removed: "eltávolítva",
    covered: "takarva",
    selected: "kijelölve",
    rules: "Szabályok",
    presets: "Szabálykészlet",
    variants: "Változatok",
    recycles: "Újraforgatások",
    unlimited: "korlátlan",
    winnableOnly: "Csak nyerhető leosztás",
    explainErrors: "Hibák magyarázata",
    deal: "Osztás",
    pasteCode: "Kód beillesztése",
    playCode: "Lejátszás",
    cancel: "Mégse",
    close: "Bezárás",
    won: "Gratulálunk, nyertél!",
    stuck: "Nincs több lehetséges lépés",
    wonSummary: (s, m, t) => `${s} pont, ${m} lépés, ${t}`,
    hintWin: "A kiemelt lépéssel a játszma megnyerhető.",
    hintNoWin: "Innen már nem nyerhető, de ez a legjobb lépés.",
    hintUnknown: "A megoldó nem döntött időben; ez a legjobb talált lépés.",
    hintNone: "Nincs javasolt lépés.",
    played: "Játszott",
    wonGames: "Nyert",
    lost: "Vesztett",
    winRate: "Nyerési arány",
    streak: "Sorozat",
    bestStreak: "Leghosszabb sorozat",
    bestTime: "Legjobb idő",
    fewestMoves: "Legkevesebb lépés",
    hintsUsed: "Felhasznált tippek",
    rank: "Hely",
    player: "Játékos",
    anonymous: "névtelen",
    noEntries: "Még nincs nyertes.",
    unverified: "Nem ellenőrzött: aki ismeri a kódot, minden lapot ismerhet.",
    verified: "Ellenőrzött: a lapok a zárásig titkosak voltak.",
    challengeOf: (d) => `A mai kihívás: ${d}`,
    closesAt: (t) => `Zárás: ${t}`,
    playersCount: (n) => `${n} játékos`,
    startChallenge: "Kihívás indítása",
    continueChallenge: "Folytatás",
    challengePlayed: "Ezt a kihívást már lejátszottad.",
    yourRank: (r) => `Helyezésed: ${r}.`,
    sealed: "titkos a zárásig",
    inProgress: "folyamatban",
    abandon: "Feladás",
    abandonConfirm: "Biztosan feladod? A játszma vesztesnek számít.",
    keys: "Billentyűk: Enter vagy Szóköz koppint, D húz, U visszavon, H tipp.",
    loading: "Betöltés…",
    failed: "A szolgáltatás nem érhető el.",
  },
  en: {
    title: "Pyramid solitaire",
    language: "Language",
    score: "Score",
    moves: "Moves",
    time: "Time",
    code: "Deal code",
    copy: "Copy",
    copied: "The code is on the clipboard",
    undo: "Undo",
    hint: "Hint",
    newGame: "New game",
    challenge: "Daily challenge",
    stats: "Statistics",
    leaderboard: "Leaderboard",
    stock: "Stock",
    stockCards: (n) => `Stock, ${n} cards — draw`,
    stockTurn: "Stock empty — turn the waste over",
    stockEmpty: "Stock empty",
    waste: "Waste",
    wasteCount: (n) => `${n} cards`,
    pyramid: "Pyramid",
    row: (n) => `Row ${n}`,
    removed: "removed",
    covered: "covered",
    selected: "selected",
    rules: "Rules",
    presets: "Rule set",
    variants: "Variants",
    recycles: "Turn-overs",
    unlimited: "unlimited",
    winnableOnly: "Winnable deals only",
    explainErrors: "Explain errors",
    deal: "Deal",
    pasteCode: "Paste a code",
    playCode: "Play",
    cancel: "Cancel",
    close: "Close",
    won: "Congratulations, you won!",
    stuck: "No more possible moves",
    wonSummary: (s, m, t) => `${s} points, ${m} moves, ${t}`,
    hintWin: "The highlighted move keeps the game winnable.",
    hintNoWin: "The game can no longer be won, but this is the best move.",
    hintUnknown: "The solver ran out of time; this is the best move it found.",
    hintNone: "No move to suggest.",
    played: "Played",
    wonGames: "Won",
    lost: "Lost",
    winRate: "Win rate",
    streak: "Streak",
    bestStreak: "Best streak",
    bestTime: "Best time",
    fewestMoves: "Fewest moves",
    hintsUsed: "Hints used",
    rank: "Rank",
    player: "Player",
    anonymous: "anonymous",
    noEntries: "No wins yet.",
    unverified: "Unverified: anyone who knows the code can know every card.",
    verified: "Verified: the cards were sealed until the close.",
    challengeOf: (d) => `Today's challenge: ${d}`,
    closesAt: (t) => `Closes: ${t}`,
    playersCount: (n) => `${n} players`,
    startChallenge: "Start the challenge",
    continueChallenge: "Continue",
    challengePlayed: "You have played this challenge.",
    yourRank: (r) => `Your rank: ${r}.`,
    sealed: "sealed until the close",
    inProgress: "in progress",
    abandon: "Give up",
    abandonConfirm: "Give this game up? It counts as lost.",
    keys: "Keys: Enter or Space taps, D draws, U undoes, H hints.",
    loading: "Loading…",
    failed: "The service cannot be reached.",
  },
};

const SUITS = { C: ["♣", "treff", "clubs"], D: ["♦", "káró", "diamonds"], H: ["♥", "kőr", "hearts"], S: ["♠", "pikk", "spades"] };
const RANKS_HU = { A: "ász", J: "bubi", Q: "dáma", K: "király" };
const RANKS_EN = { A: "Ace", J: "Jack", Q: "Queen", K: "King" };

export function cardParts(code) {
  const suit = code.slice(-1);
  return { rank: code.slice(0, -1), suit, symbol: SUITS[suit][0], red: suit === "D" || suit === "H" };
}

export function cardName(code, locale) {
  const { rank, suit } = cardParts(code);
  if (locale === "hu") return `${SUITS[suit][1]} ${RANKS_HU[rank] || rank}`;
  return `${RANKS_EN[rank] || rank} of ${SUITS[suit][2]}`;
}

export function chooseLocale(stored) {
  if (stored === "hu" || stored === "en") return stored;
  const wanted = navigator.languages || [navigator.language || "hu"];
  for (const tag of wanted) {
    const language = tag.toLowerCase().split("-")[0];
    if (language === "hu" || language === "en") return language;
  }
  return "hu";
}

export function clock(ms) {
  if (ms == null) return "0:00";
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}
