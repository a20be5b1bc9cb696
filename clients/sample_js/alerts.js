// Telling a player it is their turn: a line for screen readers (a live region),
// and while the tab is in the background a changed title; if the player turned
// sound on, a short tone (and the table's sounds: a roll, a win) made with the Web
// Audio API (no sound file); on a phone a short vibration; and, only if the player
// asked for them with the button, a browser notification while the tab is hidden.

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
  // Notifications are asked for only when the player presses the button (never on load).
  const ask = $("notify");
  const supported = "Notification" in globalThis;
  ask.hidden = !supported || Notification.permission === "granted";
  ask.addEventListener("click", async () => {
    const answer = await Notification.requestPermission();
    ask.hidden = answer === "granted";
    ask.textContent = answer === "denied" ? "Notifications blocked" : "Notify me";
    if (answer === "denied") ask.setAttribute("aria-label", "Notifications are blocked in this browser's settings");
    ask.disabled = answer === "denied";
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
  if (soundOn()) play("turn");
  // A phone in a pocket: a short buzz (a no-op where vibration is not offered).
  if (globalThis.matchMedia?.("(pointer: coarse)").matches) navigator.vibrate?.(120);
  if (document.visibilityState !== "visible") {
    document.title = TURN_TITLE;
    if ("Notification" in globalThis && Notification.permission === "granted") {
      const note = new Notification("Your turn at Tali", { body: `Your turn: ${words}.`, tag: "tali-turn" });
      note.onclick = () => { globalThis.focus(); note.close(); };
    }
  }
}

/** A sound of the table, if sound is on: "turn", "roll" or "win". Counted on the button (tests read it). */
export function play(name) {
  if (!soundOn()) return;
  const button = $("sound");
  button.dataset.played = `${name} ${Number(button.dataset.played?.split(" ")[1] ?? 0) + 1}`;
  if (name === "turn") beep();
  else if (name === "roll") notes([[0, 220], [0.05, 260], [0.1, 200]], 0.05);
  else if (name === "win") notes([[0, 523], [0.12, 659], [0.24, 784]], 0.2);
}

function notes(list, length) {
  if (!audio && globalThis.AudioContext) audio = new AudioContext();
  if (!audio) return;
  const now = audio.currentTime;
  for (const [offset, frequency] of list) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, now + offset);
    gain.gain.exponentialRampToValueAtTime(0.15, now + offset + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + offset + length);
    tone.connect(gain).connect(audio.destination);
    tone.start(now + offset);
    tone.stop(now + offset + length + 0.01);
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
