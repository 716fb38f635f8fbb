/**
 * `npm run release` for this machine's platform only (the others are the same build
 * cross-compiled, and would fetch Bun's runtime for them): the archive holds the binary, its
 * checksum (which `sha256sum -c` verifies), the systemd units and the README's programs; SHA256SUMS
 * verifies the archive; the output directory holds nothing else (no .map files); and the binary
 * from the archive is this version.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VERSION } from "../../src/util/version.ts";
import { ROOT, runProcess } from "../support/cluster.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-release-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the host platform's archive: the binary, its verified checksum, the systemd units and examples; SHA256SUMS verifies it", async () => {
  const platform = `linux-${process.arch === "arm64" ? "arm64" : "x64"}`;
  const out = join(dir, "release");
  const r = await runProcess([process.execPath, join(ROOT, "scripts/release.ts"), "--targets", platform, "--out", out], { cwd: ROOT });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const name = `ebb-${VERSION}-${platform}`;
  expect(readdirSync(out).sort()).toEqual(["SHA256SUMS", `${name}.tar.gz`]);
  expect(await runProcess(["sha256sum", "-c", "SHA256SUMS"], { cwd: out })).toEqual({ code: 0, stdout: `${name}.tar.gz: OK\n`, stderr: "" });

  const listing = await runProcess(["tar", "-tzvf", join(out, `${name}.tar.gz`)]);
  const entries = listing.stdout.trim().split("\n").map((l) => l.split(/\s+/));
  // [mode, owner, size, date, time, path]
  expect(entries.map((e) => e[5]).sort()).toEqual(
    [
      "",
      "README.md",
      "ebb",
      "ebb.sha256",
      "examples/",
      "examples/epop/",
      "examples/epop/args.ts",
      "examples/epop/cannon.ts",
      "examples/epop/ge.ts",
      "examples/epop/jacobi.ts",
      "examples/hello.sh",
      "examples/jacobi.ts",
      "examples/synthetic.ts",
      "systemd/",
      "systemd/ebb-agent.service",
      "systemd/ebb-controller.service",
    ].map((p) => `${name}/${p}`),
  );
  expect(entries.find((e) => e[5] === `${name}/ebb`)?.[0]).toBe("-rwxr-xr-x");
  expect(new Set(entries.map((e) => e[1]))).toEqual(new Set(["0/0"]));

  const unpacked = join(dir, "unpacked");
  expect((await runProcess(["sh", "-c", `mkdir -p '${unpacked}' && tar -xzf '${join(out, `${name}.tar.gz`)}' -C '${unpacked}'`])).code).toBe(0);
  const there = join(unpacked, name);
  expect(await runProcess(["sha256sum", "-c", "ebb.sha256"], { cwd: there })).toEqual({ code: 0, stdout: "ebb: OK\n", stderr: "" });
  for (const unit of ["ebb-agent.service", "ebb-controller.service"])
    expect(readFileSync(join(there, "systemd", unit), "utf8")).toBe(readFileSync(join(ROOT, "examples/systemd", unit), "utf8"));
  expect(await runProcess([join(there, "ebb"), "--version"], { cwd: there, env: { PATH: "/usr/bin:/bin" } })).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
}, 120_000);
