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
