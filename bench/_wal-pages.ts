/**
 * What a null job writes to the controller's WAL, by table and index (issue 36): `bun
 * bench/_wal-pages.ts [JOBS] [MAIN]` runs a controller and 4 agents of MAIN (default this checkout's
 * src/main.ts) and JOBS one-rank `true` jobs (default 300), holding a read transaction on the
 * database meanwhile, so that no checkpoint can restart the WAL: every page the jobs' commits wrote
 * stays in it. Then prints the frames and commits per job, and the pages per job of each b-tree
 * (dbstat's owner of each frame's page at the end; a page freed and reused counts for its last
 * owner). JOBS must keep the WAL under the controller's 10 MiB bound (~1,000 null jobs). Not a
 * benchmark (run.ts skips files named _*).
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const jobs = Number(process.argv[2] ?? 300);
const main = process.argv[3] ?? new URL("../src/main.ts", import.meta.url).pathname;

/** The WAL's frames that belong to its current generation (their salts are the header's), page numbers and commit marks. */
function frames(wal: Buffer): { page: number; commit: boolean }[] {
  if (wal.length < 32) return [];
  const size = wal.readUInt32BE(8);
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const out: { page: number; commit: boolean }[] = [];
  for (let off = 32; off + 24 + size <= wal.length; off += 24 + size) {
    if (wal.readUInt32BE(off + 8) !== salts[0] || wal.readUInt32BE(off + 12) !== salts[1]) break;
    out.push({ page: wal.readUInt32BE(off), commit: wal.readUInt32BE(off + 4) !== 0 });
  }
  return out;
}

const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, main] });
await runTrueJobs(c, 10);
// A reader whose snapshot uses the WAL: the controller's checkpoints copy pages back but cannot restart it.
const reader = new Database(c.db, { readonly: true });
reader.exec("BEGIN");
reader.query("SELECT count(*) FROM jobs").get();
const before = frames(readFileSync(`${c.db}-wal`)).length;
await runTrueJobs(c, jobs);
const all = frames(readFileSync(`${c.db}-wal`));
const dir = mkdtempSync(join(tmpdir(), "ebb-wal-pages-"));
copyFileSync(c.db, join(dir, "db"));
copyFileSync(`${c.db}-wal`, join(dir, "db-wal"));
reader.exec("COMMIT");
reader.close();
await c.stop();
if (all.length <= before) throw new Error("the WAL restarted during the run (fewer jobs, or a checkpoint got past the reader)");
const mine = all.slice(before);
const owners = new Map<number, string>();
const copy = new Database(join(dir, "db"));
for (const r of copy.query("SELECT name, pageno FROM dbstat").all() as { name: string; pageno: number }[]) owners.set(r.pageno, r.name);
copy.close();
rmSync(dir, { recursive: true, force: true });
const by = new Map<string, number>();
for (const f of mine) {
  const name = owners.get(f.page) ?? "(free)";
  by.set(name, (by.get(name) ?? 0) + 1);
}
const perJob = (n: number) => (n / jobs).toFixed(2);
console.log(`${jobs} jobs: ${perJob(mine.length)} WAL pages a job, ${perJob(mine.filter((f) => f.commit).length)} commits a job`);
for (const [name, n] of [...by].sort((a, b) => b[1] - a[1])) console.log(`  ${name.padEnd(26)} ${perJob(n)}`);
process.exit(0);
