/**
 * npm run bench [-- NAME ...] [--quick] [--json FILE]: runs the benchmarks in bench/ and prints
 * every figure next to its same-run baseline.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { formatFigures, type Bench, type Figure } from "./lib.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const jsonAt = argv.indexOf("--json");
const jsonFile = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
const wanted = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--json");

const files = readdirSync(new URL(".", import.meta.url))
  .filter((f) => f.endsWith(".ts") && !["run.ts", "lib.ts"].includes(f) && !f.startsWith("_"))
  .sort();
const benches: Bench[] = [];
for (const f of files) {
  const mod = (await import(`./${f}`)) as { default?: Bench };
  if (mod.default) benches.push(mod.default);
}
const unknown = wanted.filter((w) => !benches.some((b) => b.name === w));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; have: ${benches.map((b) => b.name).join(", ")}`);
  process.exit(2);
}
const all: Record<string, Figure[]> = {};
for (const b of benches) {
  if (wanted.length > 0 && !wanted.includes(b.name)) continue;
  process.stderr.write(`running ${b.name}: ${b.description}\n`);
  const t0 = performance.now();
  const figures = await b.run({ quick });
  all[b.name] = figures;
  process.stdout.write(formatFigures(`${b.name}  (${((performance.now() - t0) / 1000).toFixed(1)} s)`, figures) + "\n");
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(all, null, 2));
process.exit(0);
