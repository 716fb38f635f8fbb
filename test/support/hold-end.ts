/**
 * examples/jacobi.ts --hold-end FILE for a file's tests: a run holds before its answer (still
 * adapting) until its test releases it, once done with it, so that no resize or move of the test
 * comes after the run's end however loaded the machine, and no run is paced longer than its test
 * needs. Each test gets its own FILE under dir(); afterEach releases a failed test's run.
 */
import { afterEach, beforeEach } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export function holdEnd(dir: () => string) {
  let file = "";
  let runs = 0;
  const release = () => writeFileSync(file, "");
  beforeEach(() => {
    file = join(dir(), `end-${++runs}`);
  });
  afterEach(release);
  return { args: () => ["--hold-end", file], release };
}
