/** Real Unix users for the tests of jobs that run as their users (the suite runs as root). */

/** The uid of `name`, made first with useradd (no home, /bin/sh) if it does not exist. */
export function ensureUser(name: string): number {
  if (Bun.spawnSync(["id", "-u", name]).exitCode !== 0) {
    const made = Bun.spawnSync(["useradd", "--no-create-home", "--shell", "/bin/sh", name], { stderr: "pipe" });
    if (made.exitCode !== 0) throw new Error(`useradd ${name}: ${made.stderr.toString()}`);
  }
  return Number(Bun.spawnSync(["id", "-u", name]).stdout.toString().trim());
}
