// Starts the real tali server for a test: `python -m server` from the repository,
// on a free loopback port, seeded, with real timers (hands run as fast as their
// players act: no pause between them in these rooms) and the rate limits
// meant for people lifted (a test plays at machine speed). The Python is
// $TALI_PYTHON, else the repository's .venv, else python3.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export function python() {
  if (process.env.TALI_PYTHON) return process.env.TALI_PYTHON;
  const venv = join(ROOT, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

/**
 * @param {Record<string, string>} [env]  more TALI_* settings
 * @returns {Promise<{url: string, port: number, stop: () => Promise<void>}>}
 */
export async function startServer(env = {}) {
  const child = spawn(python(), ["-m", "server"], {
    cwd: ROOT,
    env: {
      ...process.env,
      TALI_HOST: "127.0.0.1",
      TALI_PORT: "0",
      TALI_LOG_FORMAT: "json",
      TALI_LOG_LEVEL: "info",
      TALI_SEED: "7",
      TALI_TIME_SCALE: "1", // real turn timers: a stalled machine cannot make them act for a bot
      TALI_STORE: "memory",
      TALI_RATE_PER_SECOND: "1000",
      TALI_RATE_BURST: "1000",
      TALI_REQUEST_BUDGET_PER_SECOND: "1000000",
      TALI_REQUEST_BUDGET_BURST: "1000000",
      TALI_ADDRESS_REQUEST_BUDGET_PER_SECOND: "1000000",
      TALI_ADDRESS_REQUEST_BUDGET_BURST: "1000000",
      TALI_BOT_THINK_MIN_SECONDS: "0",
      TALI_BOT_THINK_MAX_SECONDS: "0",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines = createInterface({ input: child.stderr });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the server did not start in 20 s")), 20000);
    child.on("exit", (code) => reject(new Error(`the server exited (${code})`)));
    lines.on("line", (line) => {
      try {
        const record = JSON.parse(line);
        if (record.event === "listening") {
          clearTimeout(timer);
          resolve(record.port);
        }
      } catch {
        // not a log record
      }
    });
  });
  return {
    port,
    url: `ws://127.0.0.1:${port}/`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
