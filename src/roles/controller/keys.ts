/** The API token and the cluster key: random secrets created at first start, kept mode 0600. */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

export function ensureSecret(dir: string, file: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, file);
  if (existsSync(path)) {
    const value = readFileSync(path, "utf8").trim();
    if (value.length >= 32) return value;
  }
  const value = randomBytes(32).toString("hex");
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return value;
}
