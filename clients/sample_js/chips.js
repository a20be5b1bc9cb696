// Chips moving from the pot to the winners at the end of a hand: each winner's badge holds
// its share as a few chips, and those chips fly in from where the pot was on the page
// (the FLIP way: they are laid out in the badge, then moved back to the pot and let go).
// The Web Animations API (allowed by the page's CSP, unlike style attributes) is not
// stopped by the stylesheet's reduced-motion rule, so this checks the preference itself.

const MOST = 5; // chips in one winner's badge, however big the pot

let potSpot = null; // where the pot was last drawn, in page coordinates

/** Remember where the pot is on the page (called each time it is drawn). */
export function notePot(node) {
  if (!node) return;
  const box = node.getBoundingClientRect();
  if (!box.width && !box.height) return;
  potSpot = { x: box.left + box.width / 2 + window.scrollX, y: box.top + box.height / 2 + window.scrollY };
}

/** How many chips show a share of what was won: 1..5, in proportion. */
export function chipCount(amount, total) {
  if (!total) return 1;
  return Math.max(1, Math.min(MOST, Math.round((MOST * amount) / total)));
}

/** Whether the person asked their system for less motion. */
export function lessMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/**
 * A flight of the pot's chips, starting now from where the pot was last drawn; null when
 * nothing may move (reduced motion) or the pot was never drawn on this page.
 */
export function takeOff() {
  if (!potSpot || lessMotion()) return null;
  return { from: potSpot, start: document.timeline.currentTime };
}

/**
 * Fly every chip of `rows` (the winners' chip rows) from the pot, on the flight's own
 * time: the table is drawn again while the chips are in the air (a verdict, a chat line)
 * and the new chips carry on where the old ones were, instead of starting again. Each
 * flight keeps its last frame (no transform) once landed, so it stays inspectable.
 */
export function flyChips(rows, flight) {
  if (!flight || lessMotion()) return;
  let order = 0;
  for (const row of rows) {
    for (const chip of row.querySelectorAll(".chip")) {
      const box = chip.getBoundingClientRect();
      const dx = flight.from.x - (box.left + box.width / 2 + window.scrollX);
      const dy = flight.from.y - (box.top + box.height / 2 + window.scrollY);
      const animation = chip.animate(
        [{ transform: `translate(${dx.toFixed(1)}px, ${dy.toFixed(1)}px) scale(1.3)` }, { transform: "none" }],
        { duration: 700, delay: order * 90, easing: "cubic-bezier(.3,.7,.4,1)", fill: "both" },
      );
      animation.startTime = flight.start;
      order += 1;
    }
  }
}
