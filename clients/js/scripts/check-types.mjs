// The declarations in types/ are generated: messages.d.ts by `python -m
// protocol.generate` (from the protocol's models), the others by `npm run types`
// (tsc, from the JSDoc of src/). This checks the second kind is current: it runs
// tsc (which also type-checks src/ against messages.d.ts) into a scratch
// directory and compares, then compiles test/types/usage.ts against the package.
// Exit 1 when stale or when tsc reports an error.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const scratch = mkdtempSync(join(tmpdir(), "tali-types-"));
try {
  const tsc = join(here, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.json"), "--outDir", scratch], {
      stdio: "inherit",
    });
  } catch {
    console.error("tsc failed: the library does not type-check");
    process.exit(1);
  }
  const made = readdirSync(scratch).filter((name) => name.endsWith(".d.ts")).sort();
  const kept = readdirSync(join(here, "types"))
    .filter((name) => name.endsWith(".d.ts") && name !== "messages.d.ts")
    .sort();
  const stale = made.filter((name) => {
    try {
      return readFileSync(join(here, "types", name), "utf8") !== readFileSync(join(scratch, name), "utf8");
    } catch {
      return true;
    }
  });
  const extra = kept.filter((name) => !made.includes(name));
  if (stale.length || extra.length) {
    console.error("types/ is out of date; run: npm run types (in clients/js)");
    for (const name of stale) console.error(`  stale or missing: types/${name}`);
    for (const name of extra) console.error(`  not generated any more: types/${name}`);
    process.exit(1);
  }
  // What a TypeScript author writes against the package (by its name: exports and all).
  try {
    execFileSync(process.execPath, [tsc, "-p", join(here, "test", "types", "tsconfig.json")], {
      stdio: "inherit",
    });
  } catch {
    console.error("test/types/usage.ts does not compile against the declarations");
    process.exit(1);
  }
  console.log(`${made.length} generated declaration files are current; usage.ts compiles`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
