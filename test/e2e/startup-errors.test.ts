/**
 * A daemon that cannot start says why in one line, naming what to do, and exits 1: a port in use,
 * a state dir it cannot write, a database that is not one or is newer than this ebb. And finished
 * jobs leave `ebb history` once older than --keep-history.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, runProcess, startCluster, waitFor } from "../support/cluster.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ebb = (args: string[]) => runProcess([process.execPath, join(ROOT, "src/main.ts"), ...args], { env: { ...process.env, EBB_LOG: "warn" } });

test("a port in use: controller, up and agent say so in one line", async () => {
  const port = await freePort();
  const holder = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
  try {
    for (const cmd of ["controller", "up"]) {
      const r = await ebb([cmd, "--listen", `127.0.0.1:${port}`, "--state-dir", join(dir, `state-${cmd}`)]);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: `ebb ${cmd}: 127.0.0.1:${port} is in use (another ebb controller or ebb up?); stop that, or listen elsewhere with --listen HOST:PORT\n` });
    }
    writeFileSync(join(dir, "key"), "k".repeat(64));
    const agent = await ebb(["agent", "--controller", "http://127.0.0.1:9", "--listen", `127.0.0.1:${port}`, "--key-file", join(dir, "key"), "--state-dir", join(dir, "agent")]);
    expect({ code: agent.code, stderr: agent.stderr }).toEqual({ code: 1, stderr: `ebb agent: 127.0.0.1:${port} is in use (another ebb controller or ebb up?); stop that, or listen elsewhere with --listen HOST:PORT\n` });
  } finally {
    holder.stop(true);
  }
}, 30_000);

test("a state dir that cannot be written, a database that is not one, and one from a newer ebb", async () => {
  writeFileSync(join(dir, "a-file"), "not a directory");
  const state = await ebb(["controller", "--listen", "127.0.0.1:0", "--state-dir", join(dir, "a-file", "state")]);
  expect({ code: state.code, stderr: state.stderr }).toEqual({ code: 1, stderr: `ebb controller: cannot write the state dir ${join(dir, "a-file", "state")} (ENOTDIR at ${join(dir, "a-file", "state")}); give --state-dir a directory you can write\n` });

  writeFileSync(join(dir, "junk.db"), "this is not SQLite, and it is long enough to have a header".repeat(10));
  const junk = await ebb(["controller", "--listen", "127.0.0.1:0", "--state-dir", join(dir, "s1"), "--db", join(dir, "junk.db")]);
  expect({ code: junk.code, stderr: junk.stderr }).toEqual({ code: 1, stderr: `ebb controller: ${join(dir, "junk.db")} is not an SQLite database; give --db another file (or move that one away)\n` });

  // A database a later ebb migrated: its last migration is newer than any this ebb has.
  const path = join(dir, "newer.db");
  const db = new Database(path, { create: true });
  db.exec("create table __drizzle_migrations (id integer primary key, hash text not null, created_at numeric)");
  db.exec(`insert into __drizzle_migrations (hash, created_at) values ('future', ${Date.UTC(2999, 0, 1)})`);
  db.close();
  const newer = await ebb(["controller", "--listen", "127.0.0.1:0", "--state-dir", join(dir, "s2"), "--db", path]);
  expect(newer.code).toBe(1);
  expect(newer.stderr).toMatch(new RegExp(`^ebb controller: ${path} was last migrated by a newer ebb \\(schema of 2999-01-01T00:00:00.000Z, this ebb knows up to \\S+\\); run that ebb, or give this one another database with --db\\n$`));
});

test("finished jobs are purged from history after --keep-history", async () => {
  const c = await startCluster({ agents: 1, controllerArgs: ["--keep-history", "3s"] });
  try {
    const id = await c.submit({ argv: ["true"] });
    await c.waitJob(id, ["COMPLETED"]);
    const listed = JSON.parse((await c.ebb(["history", "--json"])).stdout).jobs.map((j: any) => j.id);
    expect(listed).toContain(id);
    expect((await c.api("GET", "/v1/plans")).json.plans.flatMap((p: any) => p.items).map((i: any) => i.jobId)).toContain(id);
    await waitFor("the job to be purged", async () => (await c.api("GET", `/v1/jobs/${id}`)).status === 404, 15_000);
    expect(JSON.parse((await c.ebb(["history", "--json"])).stdout).jobs).toEqual([]);
    // Its scheduling plans (the plan and its items) went with it.
    expect((await c.api("GET", "/v1/plans")).json.plans).toEqual([]);
    const db = new Database(join(c.stateDir, "ebb.db"), { readonly: true });
    expect(db.query("SELECT (SELECT count(*) FROM plans) + (SELECT count(*) FROM plan_items) AS n").get()).toEqual({ n: 0 });
    db.close();
    const bad = await c.ebb(["controller", "--keep-history", "soon"]);
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: "ebb controller: --keep-history soon: expected an age such as 30d, 12h, 90m, 3600s, or forever\n" });
  } finally {
    await c.stop();
  }
}, 60_000);
