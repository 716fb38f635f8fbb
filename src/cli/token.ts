/** `ebb token create --user NAME [--admin]`: issue a user's API token (the API token or an admin's only). */
import { defineCommand } from "./command.ts";
import { client, controllerArgs, guard, printJson, UsageError } from "./common.ts";
import { out } from "../util/stdio.ts";

export default defineCommand({
  meta: {
    name: "token",
    description:
      "Issue a user's API token: ebb token create --user NAME [--admin]. The user's jobs run as that user (when the agents run as root); a user's token reads, cancels and resizes only that user's jobs, an admin's all. Only the token's hash is stored: keep what is printed.",
  },
  args: {
    action: { type: "positional", description: "create", required: true },
    user: { type: "string", description: "The user the token acts for (a login name on the nodes)", valueHint: "NAME" },
    admin: { type: "boolean", description: "An admin's token: acts on every job and node, and may issue tokens" },
    json: { type: "boolean", description: "Print the API's JSON" },
    ...controllerArgs,
  },
  run: ({ args }) =>
    guard("token", async () => {
      if (args.action !== "create") throw new UsageError(`unknown action '${args.action}': the only one is \`ebb token create --user NAME [--admin]\``);
      if (args.user === undefined || args.user === "") throw new UsageError("--user: give the user the token is for, e.g. --user alice");
      const r = await client(args).request<{ user: string; admin: boolean; token: string }>("POST", "/v1/tokens", { user: args.user, admin: args.admin === true });
      if (args.json) return printJson(r);
      out(`${r.token}\n`);
    }),
});
