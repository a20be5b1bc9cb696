// Telling a player it is their turn: a line for screen readers (a live region),
// and while the tab is in the background a changed title and, if the player
// turned it on, a short tone made with the Web Audio API (no sound file).

import { $ } from "./dom.js";

const TITLE = "Tali";
const TURN_TITLE = "▶ Your turn · Tali";
let audio = null; // an AudioContext, made once sound is turned on (it needs a click)

export function soundOn(storage = globalThis.localStorage) {
  return storage?.getItem("tali.sound") === "on";
}

function setSound(on, storage = globalThis.localStorage) {
  if (on) storage?.setItem("tali.sound", "on");
  else storage?.removeItem("tali.sound");
  const button = $("sound");
  button.setAttribute("aria-pressed", String(on));
  button.textContent = on ? "Sound on" : "Sound off";
  if (on && !audio && globalThis.AudioContext) audio = new AudioContext();
}

export function setUpAlerts() {
  setSound(soundOn());
  $("sound").addEventListener("click", () => {
    setSound(!soundOn());
    if (soundOn()) beep();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") document.title = TITLE;
  });
}

/** Say something to screen readers (politely: after what they are reading). */
export function announce(text) {
  const region = $("announce");
  // Clearing first makes the same sentence announced again.
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

/** A new decision is asked of the player (or none any more, with `null`). */
export function turnChanged(prompt, words) {
  if (!prompt) {
    document.title = TITLE;
    return;
  }
  announce(`Your turn: ${words}.`);
  if (document.visibilityState !== "visible") {
    document.title = TURN_TITLE;
    if (soundOn()) beep();
  }
}

/** Two short rising notes. */
function beep() {
  if (!audio && globalThis.AudioContext) audio = new AudioContext();
  if (!audio) return;
  audio.resume?.();
  const now = audio.currentTime;
  for (const [offset, frequency] of [[0, 660], [0.16, 880]]) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, now + offset);
    gain.gain.exponentialRampToValueAtTime(0.2, now + offset + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + offset + 0.14);
    tone.connect(gain).connect(audio.destination);
    tone.start(now + offset);
    tone.stop(now + offset + 0.15);
  }
}
