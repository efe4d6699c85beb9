// Cards move: a short transition when a card is removed (it fades out where it was), drawn (it slides from the
// stock onto the waste) and brought back by undo (it fades in), with the Web Animations API; none at all when the
// player asks for reduced motion. Nothing here changes the state or the board's layout: a removed card's fading
// copy is a decoration above the page, hidden from screen readers and from the pointer.

const DURATION_MS = 220;
const calm = window.matchMedia("(prefers-reduced-motion: reduce)");

/** Whether cards may move now (the player's setting is read each time: it can change while the page is open). */
export function moving() {
  return !calm.matches;
}

/** Where each card on the board is now, before a redraw: its code -> { element, rect }. */
export function capture() {
  const seen = new Map();
  for (const element of document.querySelectorAll("#board [data-card]")) {
    seen.set(element.dataset.card, { element, rect: element.getBoundingClientRect() });
  }
  return seen;
}

function fadeOut({ element, rect }) {
  const ghost = element.cloneNode(true);
  delete ghost.dataset.card;
  ghost.removeAttribute("id");
  ghost.setAttribute("aria-hidden", "true");
  ghost.tabIndex = -1;
  ghost.className += " ghost";
  Object.assign(ghost.style, { left: `${rect.left}px`, top: `${rect.top}px`, width: `${rect.width}px`, height: `${rect.height}px` });
  document.body.append(ghost);
  const run = ghost.animate(
    [{ opacity: 1, transform: "scale(1)" }, { opacity: 0, transform: "scale(.7)" }],
    { duration: DURATION_MS, easing: "ease-in" },
  );
  run.finished.then(() => ghost.remove(), () => ghost.remove());
}

function slideIn(element, from) {
  const to = element.getBoundingClientRect();
  const start = from ? `translate(${from.left - to.left}px, ${from.top - to.top}px)` : "scale(.7)";
  element.animate(
    [{ opacity: from ? 1 : 0, transform: start }, { opacity: 1, transform: "none" }],
    { duration: DURATION_MS, easing: "ease-out" },
  );
}

/**
 * Animates the change from the cards seen before a redraw to the board now (same game only): removed cards fade
 * out, a card new on the waste slides from the stock, a card back in the pyramid fades in.
 */
export function animateChange(before) {
  if (!moving() || !before || before.size === 0) return;
  const now = capture();
  for (const [code, was] of before) if (!now.has(code)) fadeOut(was);
  const stock = document.getElementById("stock").getBoundingClientRect();
  for (const [code, { element }] of now) {
    if (before.has(code)) continue;
    slideIn(element, element.closest("#waste-top") ? stock : null);
  }
}

/** A card let go away from any partner goes back where it was. */
export function snapBack(element, dx, dy) {
  element.style.transform = "";
  if (!moving() || (dx === 0 && dy === 0)) return;
  element.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
    duration: DURATION_MS, easing: "ease-out",
  });
}
