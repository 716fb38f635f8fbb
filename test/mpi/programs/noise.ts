// Writes seeded random text (PMI fragments, printable noise, the odd control byte or overlong line)
// on the PMI fd, lingers a moment for the answer, then exits.
import { writeSync } from "node:fs";

let seed = Number(process.argv[2] ?? 1) * 7919 + Number(process.env.PMI_RANK ?? 0) * 104729;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const pieces = [
  "cmd=init pmi_version=1 pmi_subversion=1\n",
  "cmd=init pmi_version=2 pmi_subversion=0\n",
  "cmd=put kvsname=x key=",
  "cmd=get key=a\n",
  "mcmd=spawn\nnprocs=",
  "endcmd\n",
  "000012cmd=fullinit;",
  "cmd=barrier_in\n",
  "cmd=abort exitcode=",
  "\n",
  "=",
  " ",
  "\\",
];
let out = "";
for (let i = 0; i < 30; i++) {
  const kind = rand(10);
  if (kind < 4) out += pieces[rand(pieces.length)];
  else if (kind < 9) out += String.fromCharCode(...Array.from({ length: 1 + rand(30) }, () => 32 + rand(95)));
  else out += String.fromCharCode(rand(32));
}
if (rand(5) === 0) out += "y".repeat(1500) + "\n";
try {
  writeSync(3, out);
} catch {}
await Bun.sleep(300);
