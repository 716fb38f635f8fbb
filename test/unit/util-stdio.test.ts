/** util/stdio.ts in child processes: what isTerminal says of each kind of stdout, and writes that must not lose or reorder bytes. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outputOf } from "../support/cluster.ts";

const STDIO = new URL("../../src/util/stdio.ts", import.meta.url).pathname;
const child = (code: string) => [process.execPath, "-e", `import { err, isTerminal, out, write } from ${JSON.stringify(STDIO)};\n${code}`];

describe("stdio", () => {
  test("isTerminal is false for a pipe, a file and /dev/null, true for a terminal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ebb-stdio-"));
    const probe = child("err(String(isTerminal(1)))");
    expect((await outputOf(Bun.spawn(probe, { stdout: "pipe", stderr: "pipe" }))).stderr).toBe("false");
    expect((await outputOf(Bun.spawn(probe, { stdout: openSync(join(dir, "f"), "w"), stderr: "pipe" } as never))).stderr).toBe("false");
    expect((await outputOf(Bun.spawn(probe, { stdout: "ignore", stderr: "pipe" } as never))).stderr).toBe("false");
    if (Bun.which("script")) {
      // script(1) runs the probe on a pseudo-terminal and copies what it prints.
      const r = await outputOf(Bun.spawn(["script", "-qec", `${probe.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ")} 2>&1`, "/dev/null"], { stdout: "pipe", stderr: "pipe" }));
      expect(r.stdout.trim()).toBe("true");
    }
  });

  // Bun makes a pipe non-blocking once process.stdout exists: then write(2) fails with EAGAIN
  // when the pipe is full, and the rest must go through the stream.
  for (const [name, first] of [["blocking", ""], ["non-blocking (process.stdout built first)", "void process.stdout.isTTY;"]] as const) {
    test(`a reader slower than the writer gets every byte, in order: ${name} pipe`, async () => {
      const p = Bun.spawn(child(`${first} for (let i = 0; i < 20000; i++) out(\`line \${i} \${"x".repeat(40)}\\n\`); err("done")`), { stdout: "pipe", stderr: "pipe" });
      await Bun.sleep(300);
      const r = await outputOf(p);
      expect(r.stderr).toBe("done");
      expect(r.code).toBe(0);
      const lines = r.stdout.split("\n").filter(Boolean);
      expect(lines).toHaveLength(20000);
      expect(lines.every((l, i) => l === `line ${i} ${"x".repeat(40)}`)).toBe(true);
    });
  }

  test("once the reader is gone, writes are dropped and the writer goes on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ebb-stdio-"));
    const script = child(`for (let i = 0; i < 5; i++) { write(1, "line\\n"); await Bun.sleep(30); } err("went on")`);
    const quoted = script.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const r = await outputOf(Bun.spawn(["sh", "-c", `${quoted} 2>${join(dir, "err")} | head -1`], { stdout: "pipe", stderr: "pipe" }));
    expect(r.stdout.split("\n")[0]).toBe("line");
    expect(readFileSync(join(dir, "err"), "utf8")).toBe("went on");
  });
});
