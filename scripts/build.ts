/**
 * The compiled ebb: one executable with Bun's runtime, ebb, and ebb/comm and ebb/epop for the
 * programs it runs (`ebb exec`). `npm run build` writes dist/ebb; `bun scripts/build.ts OUTFILE
 * [TARGET]` writes OUTFILE, for TARGET (e.g. bun-linux-arm64) when given (`npm run release`).
 *
 * The source map is embedded in the executable (compressed; stack traces name src/ files and
 * lines). Bun also writes one .map file per chunk next to the executable, which nothing reads:
 * the build happens in a directory of its own and only the executable is moved to OUTFILE.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

/** The build's settings, in one place: a binary for the release is the one `npm run build` makes. */
export async function buildEbb(outfile: string, target?: Bun.Build.CompileTarget): Promise<void> {
  const out = resolve(outfile);
  mkdirSync(dirname(out), { recursive: true });
  const work = mkdtempSync(join(dirname(out), ".build-"));
  try {
    const result = await Bun.build({
      // The worker threads, which the executable finds by their path under src/: agent-thread.ts, the
      // agents' (`ebb agent`, `ebb up`); replay-thread.ts, `ebb sim`'s replays.
      entrypoints: [join(ROOT, "src/main.ts"), join(ROOT, "src/cli/agent-thread.ts"), join(ROOT, "src/sim/replay-thread.ts")],
      root: join(ROOT, "src"),
      compile: {
        outfile: join(work, "ebb"),
        ...(target ? { target } : {}),
        // A job's working directory is not ebb's configuration.
        autoloadDotenv: false,
        autoloadBunfig: false,
        // Every command starts with a reluctant JIT (util/jit.ts), module loading included.
        jitPolicy: 16,
      },
      splitting: true,
      format: "esm",
      bytecode: true,
      minify: true,
      sourcemap: "linked",
    });
    if (!result.success) throw new AggregateError(result.logs, `building ${outfile} failed:\n${result.logs.join("\n")}`);
    renameSync(join(work, "ebb"), out);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const [outfile = join(ROOT, "dist/ebb"), target] = process.argv.slice(2);
  await buildEbb(outfile, target as Bun.Build.CompileTarget | undefined);
}
