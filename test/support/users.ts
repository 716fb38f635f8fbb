/** Real Unix users for the tests of jobs that run as their users (the suite runs as root). */

function made(argv: string[]): void {
  const r = Bun.spawnSync(argv, { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${r.stderr.toString()}`);
}

/** The uid of `name`, made first with useradd (no home, /bin/sh) if it does not exist; with `groups`, made a member of them too (each made first if need be). */
export function ensureUser(name: string, groups: readonly string[] = []): number {
  for (const g of groups) if (Bun.spawnSync(["getent", "group", g]).exitCode !== 0) made(["groupadd", g]);
  if (Bun.spawnSync(["id", "-u", name]).exitCode !== 0) made(["useradd", "--no-create-home", "--shell", "/bin/sh", ...(groups.length > 0 ? ["--groups", groups.join(",")] : []), name]);
  else if (groups.length > 0) made(["usermod", "--append", "--groups", groups.join(","), name]);
  return Number(Bun.spawnSync(["id", "-u", name]).stdout.toString().trim());
}
