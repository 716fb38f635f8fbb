/**
 * Real OpenSSH servers on loopback addresses (127.0.0.2, 127.0.0.3, ...), one "host" each, started
 * as the test's user (root in CI) with a generated host key, an authorized client key and an ssh
 * client config naming them h1, h2, ... `ssh -F <config> h1 true` logs in.
 */
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./cluster.ts";

const SSHD = "/usr/sbin/sshd";

async function run(argv: string[]): Promise<void> {
  const p = Bun.spawn(argv, { stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`${argv.join(" ")} failed (${code}): ${err}`);
}

const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host, port });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });

export class SshHosts {
  readonly dir = mkdtempSync(join(tmpdir(), "ebb-sshd-"));
  readonly config = join(this.dir, "ssh_config");
  private readonly servers = new Map<string, Subprocess>();
  port = 0;

  /** `addrs[i]` is host h{i+1}; only the `up` ones get an sshd (the others are "down" hosts). */
  constructor(readonly addrs: string[]) {}

  async start(up: string[] = this.addrs.map((_, i) => `h${i + 1}`)): Promise<this> {
    if (!existsSync(SSHD)) throw new Error(`${SSHD} not found: install openssh-server (.ci/run does)`);
    // sshd wants its privilege-separation directory.
    mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
    await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", join(this.dir, "host_key")]);
    await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", join(this.dir, "client_key")]);
    writeFileSync(join(this.dir, "authorized_keys"), readFileSync(join(this.dir, "client_key.pub")), { mode: 0o600 });
    // One port on every address: free on the first (the others are as unlikely to hold it).
    const probe = Bun.listen({ hostname: this.addrs[0]!, port: 0, socket: { data() {} } });
    this.port = probe.port;
    probe.stop(true);
    const hostLines = this.addrs.map((a, i) => `Host h${i + 1}\n  HostName ${a}\n`).join("");
    writeFileSync(
      this.config,
      `${hostLines}Host *\n  Port ${this.port}\n  User ${process.env.USER || "root"}\n  IdentityFile ${join(this.dir, "client_key")}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${join(this.dir, "known_hosts")}\n  StrictHostKeyChecking no\n  LogLevel ERROR\n`,
    );
    for (const name of up) await this.startOne(name);
    return this;
  }

  private addrOf(name: string): string {
    return this.addrs[Number(name.slice(1)) - 1]!;
  }

  async startOne(name: string): Promise<void> {
    const addr = this.addrOf(name);
    const cfg = join(this.dir, `sshd_config-${name}`);
    writeFileSync(
      cfg,
      [
        `ListenAddress ${addr}:${this.port}`,
        `HostKey ${join(this.dir, "host_key")}`,
        `PidFile ${join(this.dir, `sshd-${name}.pid`)}`,
        `AuthorizedKeysFile ${join(this.dir, "authorized_keys")}`,
        "StrictModes no",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "PermitRootLogin prohibit-password",
        "MaxStartups 100",
        "MaxSessions 100",
        "LogLevel ERROR",
        "",
      ].join("\n"),
    );
    const p = Bun.spawn([SSHD, "-D", "-e", "-f", cfg], { stdout: "ignore", stderr: Bun.file(join(this.dir, `sshd-${name}.log`)) });
    this.servers.set(name, p);
    await waitFor(`sshd on ${addr}:${this.port}`, async () => (p.exitCode !== null ? Promise.reject(new Error(this.log(name))) : accepts(addr, this.port)));
  }

  /** The pid of host `name`'s sshd (its sessions are its children). */
  pid(name: string): number {
    return this.servers.get(name)!.pid;
  }

  log(name: string): string {
    const f = join(this.dir, `sshd-${name}.log`);
    return existsSync(f) ? readFileSync(f, "utf8") : "";
  }

  async stop(): Promise<void> {
    for (const p of this.servers.values()) p.kill("SIGTERM");
    await Promise.all([...this.servers.values()].map((p) => p.exited));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
