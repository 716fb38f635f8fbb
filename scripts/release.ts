/**
 * `npm run release [-- --targets linux-x64,linux-arm64] [--out dist/release]`: what a lab
 * downloads, one archive per platform, `ebb-VERSION-PLATFORM.tar.gz`, holding
 *
 *   ebb-VERSION-PLATFORM/ebb          the compiled binary (scripts/build.ts; cross-compiled by Bun)
 *   ebb-VERSION-PLATFORM/ebb.sha256   its checksum: `sha256sum -c ebb.sha256` in that directory
 *   ebb-VERSION-PLATFORM/systemd/     ebb-controller.service and ebb-agent.service
 *   ebb-VERSION-PLATFORM/examples/    the README's programs, run by the binary itself (`bun app.ts`
 *                                     on a node without bun, or `ebb exec app.ts`)
 *   ebb-VERSION-PLATFORM/README.md
 *
 * and SHA256SUMS over the archives beside them. Cross-compiling fetches Bun's runtime for each
 * other platform once (Bun caches it).
 */
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { VERSION } from "../src/util/version.ts";
import { buildEbb } from "./build.ts";

const ROOT = resolve(import.meta.dir, "..");

/** The platforms released, and Bun's compile target for each (ebb's agents need Linux). */
export const TARGETS: Record<string, Bun.Build.CompileTarget> = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
};

/** What goes beside the binary, from the repository. */
const FILES = ["README.md", "examples/systemd/ebb-controller.service", "examples/systemd/ebb-agent.service", "examples/hello.sh", "examples/jacobi.ts", "examples/synthetic.ts", "examples/epop"];

/** Where each of FILES goes in the archive's directory. */
const placed = (file: string) => (file.startsWith("examples/systemd/") ? join("systemd", basename(file)) : file);

async function sha256(path: string): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) h.update(chunk);
  return h.digest("hex");
}

async function run(argv: string[], cwd: string): Promise<void> {
  const p = Bun.spawn(argv, { cwd, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`${argv.join(" ")} failed (${code}): ${err.trim()}`);
}

/** Writes the archive of `platform` into `out`; its path. */
export async function releaseArchive(platform: string, out: string): Promise<string> {
  const target = TARGETS[platform];
  if (!target) throw new Error(`no platform ${platform}; the platforms are ${Object.keys(TARGETS).join(", ")}`);
  const name = `ebb-${VERSION}-${platform}`;
  const stage = mkdtempSync(join(out, ".stage-"));
  try {
    const dir = join(stage, name);
    await buildEbb(join(dir, "ebb"), target);
    writeFileSync(join(dir, "ebb.sha256"), `${await sha256(join(dir, "ebb"))}  ebb\n`);
    for (const file of FILES) cpSync(join(ROOT, file), join(dir, placed(file)), { recursive: true });
    for (const script of ["examples/hello.sh"]) chmodSync(join(dir, script), 0o755);
    const archive = join(out, `${name}.tar.gz`);
    // Owned by root in the archive, in name order: the same files make the same listing.
    await run(["tar", "--owner=0", "--group=0", "--numeric-owner", "--sort=name", "-czf", archive, name], stage);
    return archive;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { targets: { type: "string", default: Object.keys(TARGETS).join(",") }, out: { type: "string", default: join(ROOT, "dist/release") } }, strict: true });
  const out = resolve(values.out!);
  mkdirSync(out, { recursive: true });
  const sums: string[] = [];
  for (const platform of values.targets!.split(",").filter(Boolean)) {
    const archive = await releaseArchive(platform, out);
    const sum = await sha256(archive);
    sums.push(`${sum}  ${basename(archive)}`);
    console.log(`${relative(process.cwd(), archive)}  ${(Bun.file(archive).size / 2 ** 20).toFixed(1)} MiB  sha256 ${sum}`);
  }
  // Every archive of this directory, those of an earlier run for another platform included.
  const known = new Map(sums.map((l) => [l.slice(66), l]));
  for (const f of readdirSync(out).filter((f) => f.endsWith(".tar.gz") && !known.has(f)).sort()) known.set(f, `${await sha256(join(out, f))}  ${f}`);
  writeFileSync(join(out, "SHA256SUMS"), [...known.keys()].sort().map((f) => `${known.get(f)}\n`).join(""));
}
