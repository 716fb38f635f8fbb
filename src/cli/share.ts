/** `ebb share`: every user's shares, usage and fair-share factor (like sshare). */
import { out } from "../util/stdio.ts";
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, table } from "./common.ts";

const fixed = (x: number, d: number) => x.toFixed(d);

export default defineCommand({
  meta: {
    name: "share",
    description:
      "Every user's fair share (like sshare): shares given (RAWSHARES) and their part of all (NORMSHARES); usage of cores, memory and GPUs in billing-unit seconds, as used (RAWUSAGE) and decayed by the half-life (DECAYED); its part of all decayed usage (EFFECTVUSAGE); the factor 2^(-EFFECTVUSAGE/NORMSHARES)",
  },
  args: {
    user: { type: "string", alias: "u", description: "Only this user", valueHint: "USER" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("share", async () => {
      const r = await client(args).shares();
      const users = args.user === undefined ? r.users : r.users.filter((u) => u.user === args.user);
      if (args.json) return printJson({ settings: r.settings, users });
      const w = r.settings.tresWeights;
      out(`billing per second: core ${w.cpu}, GiB of memory ${w.memGiB}, GPU ${w.gpu}; usage half-life ${r.settings.halfLife} s\n`);
      if (users.length === 0) return out("no users yet (none has shares in the config, usage or jobs)\n");
      out(table(["USER", "RAWSHARES", "NORMSHARES", "RAWUSAGE", "DECAYED", "EFFECTVUSAGE", "FAIRSHARE"], users.map((u) => [u.user, String(u.rawShares), fixed(u.normShares, 6), fixed(u.rawUsage, 0), fixed(u.decayedUsage, 0), fixed(u.effectiveUsage, 6), fixed(u.fairShare, 6)])));
    }),
});
