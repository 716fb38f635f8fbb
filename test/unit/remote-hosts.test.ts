/** Host lists of `ebb up --hosts` / `--hostfile`, --ssh-opts word splitting, srun's argv, and the remote sh scripts (run by a local sh). */
import { describe, expect, test } from "bun:test";
import { parseHostfile, parseHostsFlag } from "../../src/roles/remote/hosts.ts";
import { agentCommand, controllerCommand, NEED_COPY, SERVER_ADDR, splitWords } from "../../src/roles/remote/ssh.ts";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONFIG_VAR, slurmAllocation, srunArgv } from "../../src/roles/remote/slurm.ts";

describe("--hosts", () => {
  test("user@, :port and plain names; the node name is the host", () => {
    expect(parseHostsFlag("a, me@b,c:2222,me@[fd00::1]:22")).toEqual([
      { name: "a", host: "a", user: undefined, port: undefined, slots: undefined },
      { name: "b", host: "b", user: "me", port: undefined, slots: undefined },
      { name: "c", host: "c", user: undefined, port: 2222, slots: undefined },
      { name: "fd00--1", host: "fd00::1", user: "me", port: 22, slots: undefined },
    ]);
  });
  test.each([
    ["", "no hosts given"],
    ["a,a", "host a is given twice"],
    ["a:99999", '"a:99999": port 99999 is not 1-65535'],
    ["a b", '"a b" is not a host: give [user@]host[:port]'],
    ["_x", '"_x": _x cannot be a node name (letters, digits, \'.\', \'_\', \'-\')'],
  ])("%p is refused: %s", (text, error) => {
    expect(parseHostsFlag(text)).toEqual({ error });
  });
});

describe("--hostfile", () => {
  test("one host a line, comments, slots=N", () => {
    expect(parseHostfile("# lab\nn1 slots=4\n\n  n2   # spare\nroot@n3:2200 slots=1\n")).toEqual([
      { name: "n1", host: "n1", user: undefined, port: undefined, slots: 4 },
      { name: "n2", host: "n2", user: undefined, port: undefined, slots: undefined },
      { name: "n3", host: "n3", user: "root", port: 2200, slots: 1 },
    ]);
  });
  test("errors name the line", () => {
    expect(parseHostfile("n1\nn2 cpus=3\n")).toEqual({ error: 'line 2: "cpus=3" is not slots=N (N >= 1)' });
    expect(parseHostfile("n1\nn2 slots=0\n")).toEqual({ error: 'line 2: "slots=0" is not slots=N (N >= 1)' });
    expect(parseHostfile("# nothing\n")).toEqual({ error: "no hosts given" });
  });
});

describe("--ssh-opts", () => {
  test("split like a shell: spaces separate, quotes group", () => {
    expect(splitWords(`-F cfg -o "ProxyCommand=ssh gw -W %h:%p" -o 'User=x y'`)).toEqual(["-F", "cfg", "-o", "ProxyCommand=ssh gw -W %h:%p", "-o", "User=x y"]);
    expect(splitWords("")).toEqual([]);
    expect(splitWords(`-o "x`)).toEqual({ error: 'unbalanced " in "-o "x"' });
  });
});

test("the remote command carries no key: the agent reads it from stdin", () => {
  const cmd = agentCommand({ remotePath: ".ebb/bin/ebb", sha256: "ab".repeat(32), name: "n1", logLevel: "warn" });
  expect(cmd).toStartWith("sh -c '");
  expect(cmd).toContain("IFS= read -r EBB_CLUSTER_KEY");
  expect(cmd).toContain("--tied-to-stdin");
  expect(cmd).not.toContain("--key-file");
});

/** Runs a remote command line under sh as sshd would, with $p a stand-in binary that prints its argv and what it was given. */
async function runRemote(make: (sha256: string) => string, stdin: string, keep?: string): Promise<{ code: number; out: string }> {
  const dir = keep ?? mkdtempSync(join(tmpdir(), "ebb-remote-script-"));
  try {
    const bin = join(dir, "ebb");
    if (!keep || !existsSync(bin)) writeFileSync(bin, '#!/bin/sh\nfor a in "$@"; do echo "arg: $a"; done\necho "key env: ${EBB_CLUSTER_KEY-none}"\n', { mode: 0o755 });
    const sha = new Bun.CryptoHasher("sha256").update(readFileSync(bin)).digest("hex");
    const cmd = make(sha).replace(/__BIN__/g, bin);
    const p = Bun.spawn(["sh", "-c", cmd], { stdin: new TextEncoder().encode(stdin), stdout: "pipe", stderr: "inherit", env: { PATH: process.env.PATH!, HOME: dir, SSH_CONNECTION: "10.0.0.9 50000 10.0.0.1 22" } });
    const out = await new Response(p.stdout).text();
    return { code: await p.exited, out: out.replaceAll(dir, "DIR") };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

describe("the remote scripts, run by sh", () => {
  test("the agent: the controller at the address ssh came from, or the one given (quoted once); the key from stdin into its environment", async () => {
    const from = await runRemote((sha) => agentCommand({ remotePath: "__BIN__", sha256: sha, name: "n1", logLevel: "warn" }), "K3Y\n7700\n");
    expect(from.code).toBe(0);
    expect(from.out).toContain("arg: http://10.0.0.9:7700\n");
    expect(from.out).toContain("arg: 10.0.0.1:0\n");
    expect(from.out).toContain("key env: K3Y\n");
    const given = await runRemote((sha) => agentCommand({ remotePath: "__BIN__", sha256: sha, name: "n1", controllerHost: "head.lab", logLevel: "warn" }), "K3Y\n7700\n");
    expect(given.out).toContain("arg: http://head.lab:7700\n");
    const stale = await runRemote(() => agentCommand({ remotePath: "__BIN__", sha256: "00".repeat(32), name: "n1", logLevel: "warn" }), "K3Y\n7700\n");
    expect(stale).toEqual({ code: NEED_COPY, out: "" });
    const noPort = await runRemote((sha) => agentCommand({ remotePath: "__BIN__", sha256: sha, name: "n1", logLevel: "warn" }), "K3Y\n");
    expect(noPort.code).toBe(87);
  });

  test("the agent's configuration (ebb up --agent-config) from stdin after the port, into agent.json in its state dir, given as --config", async () => {
    const config = '{"hostStates":{"rules":{"load1":{"busy":4}}},\n"nodes":{"n1":{}}}';
    const dir = mkdtempSync(join(tmpdir(), "ebb-remote-config-"));
    try {
      const r = await runRemote((sha) => agentCommand({ remotePath: "__BIN__", sha256: sha, name: "n1", logLevel: "warn", config: true }), `K3Y\n7700\n${Buffer.from(config).toString("base64")}\n`, dir);
      expect(r.code).toBe(0);
      expect(r.out).toContain("arg: --config\narg: DIR/ebb.d/n1/agent.json\n");
      expect(readFileSync(join(dir, "ebb.d/n1/agent.json"), "utf8")).toBe(config);
      expect(statSync(join(dir, "ebb.d/n1/agent.json")).mode & 0o777).toBe(0o600);
      // Without its line, the agent does not start.
      expect((await runRemote((sha) => agentCommand({ remotePath: "__BIN__", sha256: sha, name: "n1", logLevel: "warn", config: true }), "K3Y\n7700\n")).code).toBe(87);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a binary found good is not hashed again until it is replaced", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ebb-remote-stamp-"));
    try {
      let sha = "";
      const cmd = (s: string) => agentCommand({ remotePath: "__BIN__", sha256: (sha = s), name: "n1", logLevel: "warn" });
      expect((await runRemote(cmd, "K3Y\n7700\n", dir)).code).toBe(0);
      const stamp = readFileSync(join(dir, "ebb.sha256"), "utf8");
      expect(stamp).toStartWith(`${sha} `);
      // The stamp is trusted: a binary with the same inode and no newer mtime is not hashed (a wrong stamp proves it).
      writeFileSync(join(dir, "ebb.sha256"), stamp.replace(sha, "00".repeat(32)));
      expect((await runRemote(() => agentCommand({ remotePath: "__BIN__", sha256: "00".repeat(32), name: "n1", logLevel: "warn" }), "K3Y\n7700\n", dir)).code).toBe(0);
      // Replaced (a new file moved over it): hashed again, and found different.
      writeFileSync(join(dir, "other"), "#!/bin/sh\necho other\n", { mode: 0o755 });
      renameSync(join(dir, "other"), join(dir, "ebb"));
      expect((await runRemote(() => agentCommand({ remotePath: "__BIN__", sha256: "00".repeat(32), name: "n1", logLevel: "warn" }), "K3Y\n7700\n", dir)).code).toBe(NEED_COPY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the controller (--controller-on-first): key and token from stdin into its state dir, never an argument; the address ssh reached it at first", async () => {
    const r = await runRemote((sha) => controllerCommand({ remotePath: "__BIN__", sha256: sha, port: 0, flags: ["--heartbeat", "1"], logLevel: "warn" }), "K3Y\nT0K\n");
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [`${SERVER_ADDR} 10.0.0.1`, "arg: controller", "arg: --listen", "arg: 0.0.0.0:0", "arg: --state-dir", "arg: DIR/ebb.d/controller", "arg: --tied-to-stdin", "arg: --heartbeat", "arg: 1", "key env: none", ""].join("\n"),
    );
  });
});

describe("ebb up --slurm", () => {
  test("the allocation from Slurm's environment, its node list in Slurm's syntax", () => {
    expect(slurmAllocation({ SLURM_JOB_ID: "12", SLURM_JOB_NODELIST: "n[1-2],gpu01" })).toEqual({ jobId: "12", nodes: ["n1", "n2", "gpu01"] });
    expect(slurmAllocation({})).toEqual({ error: "not inside a Slurm allocation (no SLURM_JOB_ID / SLURM_JOB_NODELIST): run it in an sbatch script or under salloc" });
    expect(slurmAllocation({ SLURM_JOB_ID: "12", SLURM_JOB_NODELIST: "n[1-" })).toEqual({ error: 'SLURM_JOB_NODELIST: "n[1-" has unbalanced brackets' });
  });
  test("srun: one agent per node, overlapping the job's steps, the key not in its argv", () => {
    const argv = srunArgv({ binary: ["/opt/ebb"], nodes: 3, controllerPort: 7700 });
    expect(argv.slice(0, 5)).toEqual(["srun", "--nodes=3", "--ntasks-per-node=1", "--ntasks=3", "--overlap"]);
    expect(argv.at(-1)).toBe(`exec '/opt/ebb' agent --controller "http://$SLURM_LAUNCH_NODE_IPADDR:7700" --name "$SLURMD_NODENAME" --tied-to-stdin`);
  });
  test("srun with the agents' configuration (ebb up --agent-config): each agent writes it from the environment into its state dir and is given it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ebb-srun-config-"));
    try {
      const bin = join(dir, "ebb");
      writeFileSync(bin, `#!/bin/sh\nfor a in "$@"; do echo "arg: $a"; done\necho "var: \${${CONFIG_VAR}-unset}"\n`, { mode: 0o755 });
      const argv = srunArgv({ binary: [bin], nodes: 2, controllerPort: 7700, config: true });
      expect(argv.slice(-3, -1)).toEqual(["sh", "-c"]);
      const config = '{"nodes":{"n[1-2]":{"hostStates":{"rules":{"load1":{"busy":4}}}}}}';
      const p = Bun.spawn(["sh", "-c", argv.at(-1)!], { stdout: "pipe", stderr: "inherit", env: { PATH: process.env.PATH!, HOME: dir, SLURMD_NODENAME: "n2", SLURM_LAUNCH_NODE_IPADDR: "10.0.0.1", [CONFIG_VAR]: config } });
      const out = (await new Response(p.stdout).text()).replaceAll(dir, "DIR");
      expect(await p.exited).toBe(0);
      expect(out).toContain("arg: --config\narg: DIR/.ebb/agents/n2/agent.json\n");
      expect(out).toContain("var: unset\n");
      expect(readFileSync(join(dir, ".ebb/agents/n2/agent.json"), "utf8")).toBe(config);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
