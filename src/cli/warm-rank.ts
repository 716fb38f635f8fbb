/** `ebb warm-rank` (hidden): a pre-started rank process an agent keeps in its pool (roles/warm-rank.ts). */
import { defineCommand } from "./command.ts";
import { serveWarmRank } from "../roles/warm-rank.ts";

export default defineCommand({
  meta: {
    name: "warm-rank",
    description: "Wait, with ebb/comm loaded, for the agent to hand over a rank to run (an agent starts these; the claim is JSON on stdin)",
    hidden: true,
  },
  args: {
    agent: { type: "string", description: "The agent that started it (shown by ps; not used)", valueHint: "NAME" },
  },
  run: () => serveWarmRank(),
});
