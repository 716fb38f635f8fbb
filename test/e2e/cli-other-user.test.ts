/**
 * A user other than the cluster's owner who names its state dir (EBB_STATE_DIR, as a site may set
 * for everyone) cannot read the 0600 controller.url and token there: the client says in one line
 * what to give instead, not a stack trace.
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runProcess } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-cli-user-"));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("an unreadable controller.url or token in the state dir is a usage error naming the flag or variable to use", async () => {
  expect(process.getuid!()).toBe(0);
  const uid = ensureUser("ebbt_alice");
  for (const f of ["controller.url", "token"]) writeFileSync(join(dir, f), f === "token" ? "t".repeat(40) : "http://127.0.0.1:9\n", { mode: 0o600 });
  const asAlice = (env: Record<string, string>) =>
    runProcess(["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--", process.execPath, join(ROOT, "src/main.ts"), "queue"], {
      cwd: dir,
      env: { PATH: process.env.PATH!, HOME: dir, EBB_STATE_DIR: dir, ...env },
    });
  const noUrl = await asAlice({});
  expect({ code: noUrl.code, stderr: noUrl.stderr }).toEqual({ code: 2, stderr: `ebb queue: cannot read ${join(dir, "controller.url")} (permission denied): give the controller with --controller URL or EBB_CONTROLLER\n` });
  const noToken = await asAlice({ EBB_CONTROLLER: "http://127.0.0.1:9" });
  expect({ code: noToken.code, stderr: noToken.stderr }).toEqual({ code: 2, stderr: `ebb queue: cannot read ${join(dir, "token")} (permission denied): set EBB_TOKEN to your own token (an admin issues it: ebb token create --user NAME)\n` });
});
