// The rules panel (a <dialog> in index.html): its dice are drawn here, each
// set with the name of the roll it makes, from the same table as the game's.

import { $, diceWithName } from "../dom.js";

export function setUpRules() {
  const dialog = $("rules");
  for (const slot of dialog.querySelectorAll("[data-dice]")) {
    slot.replaceChildren(diceWithName([...slot.dataset.dice].map(Number), { "data-testid": `rules-dice-${slot.dataset.dice}` }));
  }
  $("rules-open").addEventListener("click", () => dialog.showModal());
  $("rules-close").addEventListener("click", () => dialog.close());
  // A click on the backdrop (outside the dialog's box) closes it too.
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
}
