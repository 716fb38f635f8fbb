/** The name of the user this process runs as (Bun's os.userInfo() may say "unknown": /etc/passwd then). */
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";

export function currentUser(): string {
  const info = userInfo();
  if (info.username && info.username !== "unknown") return info.username;
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f.length > 2 && Number(f[2]) === info.uid && f[0]) return f[0];
    }
  } catch {}
  return process.env.USER || process.env.LOGNAME || `uid${info.uid}`;
}

/**
 * The groups `user` is in, by name, from /etc/passwd (its primary group) and /etc/group (the
 * others): what a partition's AllowGroups is checked against. Users and groups only a directory
 * service knows (LDAP, SSSD) are not seen. Read at most once a minute.
 */
export function groupsOf(user: string, now = Date.now()): string[] {
  if (!groupFiles || now - groupFiles.at > 60_000) groupFiles = readGroupFiles(now);
  const out = new Set<string>();
  const gid = groupFiles.primary.get(user);
  for (const [name, g] of groupFiles.groups) if (g.gid === gid || g.members.includes(user)) out.add(name);
  return [...out];
}

let groupFiles: { at: number; primary: Map<string, string>; groups: Map<string, { gid: string; members: string[] }> } | undefined;

function readGroupFiles(at: number): NonNullable<typeof groupFiles> {
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8").split("\n").map((l) => l.split(":"));
    } catch {
      return [];
    }
  };
  const primary = new Map<string, string>();
  for (const f of read("/etc/passwd")) if (f.length > 3 && f[0]) primary.set(f[0], f[3]!);
  const groups = new Map<string, { gid: string; members: string[] }>();
  for (const f of read("/etc/group")) if (f.length > 3 && f[0]) groups.set(f[0], { gid: f[2]!, members: f[3]!.split(",").filter(Boolean) });
  return { at, primary, groups };
}
