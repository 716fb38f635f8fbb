/** A job's umask from its SLURM_UMASK: Slurm's four digits or three; anything else is no mask. */
import { expect, test } from "bun:test";
import { currentUmask, umaskOf, withOwnUmask } from "../../src/roles/job-umask.ts";

test("SLURM_UMASK: 0077 and 077 are masks; other text is none", () => {
  expect(umaskOf({ SLURM_UMASK: "0077" })).toBe(0o77);
  expect(umaskOf({ SLURM_UMASK: "027" })).toBe(0o27);
  expect(umaskOf({ SLURM_UMASK: "0000" })).toBe(0);
  for (const bad of ["", "77", "0o77", "00777", "0078", "0077 ", "; id"]) expect({ bad, mask: umaskOf({ SLURM_UMASK: bad }) }).toEqual({ bad, mask: undefined });
  expect(umaskOf({})).toBeUndefined();
});

test("the process's umask is written as Slurm writes it, and read back", () => {
  const old = process.umask(0o27);
  try {
    expect(currentUmask()).toBe("0027");
    expect(umaskOf({ SLURM_UMASK: currentUmask() })).toBe(0o27);
  } finally {
    process.umask(old);
  }
});

test("as the agent itself: SLURM_UMASK leaves the environment; a mask not the agent's is taken by a shell first", () => {
  const agent = process.umask();
  const other = agent === 0o77 ? 0o27 : 0o77;
  const text = (m: number) => `0${m.toString(8).padStart(3, "0")}`;
  expect(withOwnUmask(["prog", "a"], { A: "1" })).toEqual({ argv: ["prog", "a"], env: { A: "1" } });
  expect(withOwnUmask(["prog"], { A: "1", SLURM_UMASK: text(agent) })).toEqual({ argv: ["prog"], env: { A: "1" } });
  expect(withOwnUmask(["prog"], { SLURM_UMASK: "bad" })).toEqual({ argv: ["prog"], env: {} });
  expect(withOwnUmask(["prog", "a b"], { SLURM_UMASK: text(other) })).toEqual({ argv: ["/bin/sh", "-c", 'umask "$0" && exec "$@"', text(other), "prog", "a b"], env: {} });
  const r = withOwnUmask(["sh", "-c", "umask"], { SLURM_UMASK: text(other) });
  expect(Bun.spawnSync([...r.argv], { env: r.env }).stdout.toString()).toBe(`${text(other)}\n`);
});
