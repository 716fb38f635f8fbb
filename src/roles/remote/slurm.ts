/**
 * `ebb up --slurm`: inside a Slurm allocation, one agent per allocated node started with
 * `srun --ntasks-per-node=1 --overlap` (no ssh). The agents get the cluster key through srun's
 * environment (never an argument), are named after their Slurm node, and call the controller back
 * at the address of the node srun ran on (SLURM_LAUNCH_NODE_IPADDR). Slurm ends them, and the
 * controller with its batch script or salloc shell, when the allocation ends.
 */
import type { Subprocess } from "bun";
import { expandHostlist } from "../../util/hostlist.ts";

export interface Allocation {
  jobId: string;
  nodes: string[];
}

/** The allocation this process runs in, from Slurm's environment; an error text outside one. */
export function slurmAllocation(env: Record<string, string | undefined>): Allocation | { error: string } {
  const jobId = env.SLURM_JOB_ID ?? env.SLURM_JOBID;
  const list = env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST;
  if (!jobId || !list) return { error: "not inside a Slurm allocation (no SLURM_JOB_ID / SLURM_JOB_NODELIST): run it in an sbatch script or under salloc" };
  const nodes = expandHostlist(list);
  if ("error" in nodes) return { error: `SLURM_JOB_NODELIST: ${nodes.error}` };
  if (nodes.length === 0) return { error: "SLURM_JOB_NODELIST names no node" };
  return { jobId, nodes };
}

/** The variables that carry the agents' TLS files (PEM) through srun's environment, like the cluster key. */
export const TLS_VARS = { ca: "EBB_TLS_CA_PEM", cert: "EBB_TLS_CERT_PEM", key: "EBB_TLS_KEY_PEM" } as const;

/**
 * With TLS: each agent writes the PEMs of TLS_VARS to tls/ in its state dir (0600), drops the
 * variables, and is given the files.
 */
const tlsFiles = [
  `d="\${EBB_STATE_DIR:-$HOME/.ebb}/agents/$SLURMD_NODENAME/tls"`,
  `umask 077; mkdir -p "$d" || exit 1`,
  `printf '%s\\n' "$${TLS_VARS.ca}" > "$d/ca.pem" && printf '%s\\n' "$${TLS_VARS.cert}" > "$d/cert.pem" && printf '%s\\n' "$${TLS_VARS.key}" > "$d/key.pem" || exit 1`,
  `unset ${Object.values(TLS_VARS).join(" ")}`,
];

/** The variable that carries the agents' configuration file (`ebb up --agent-config`) through srun's environment. */
export const CONFIG_VAR = "EBB_AGENT_CONFIG_JSON";
/** The most a variable's text may be (Linux: MAX_ARG_STRLEN, 128 KiB), less room for its name. */
export const MAX_CONFIG_BYTES = 128 * 1024 - 64;

/** With a configuration: each agent writes CONFIG_VAR to agent.json in its state dir (0600) and drops the variable. */
const configFile = [
  `cfg="\${EBB_STATE_DIR:-$HOME/.ebb}/agents/$SLURMD_NODENAME"`,
  `umask 077; mkdir -p "$cfg" || exit 1`,
  `printf '%s' "$${CONFIG_VAR}" > "$cfg/agent.json" || exit 1`,
  `unset ${CONFIG_VAR}`,
];

/** srun's argv: one agent task per node of the allocation, sharing its CPUs with the job's other steps. */
export function srunArgv(o: { binary: string[]; nodes: number; controllerPort: number; controllerHost?: string; cpus?: number; tls?: boolean; config?: boolean }): string[] {
  const host = o.controllerHost ?? "$SLURM_LAUNCH_NODE_IPADDR";
  const agent = [
    ...o.binary.map((w) => `'${w.replace(/'/g, "'\\''")}'`),
    "agent", "--controller", `"${o.tls ? "https" : "http"}://${host}:${o.controllerPort}"`, "--name", '"$SLURMD_NODENAME"', "--tied-to-stdin",
    ...(o.cpus ? ["--cpus", String(o.cpus)] : []),
    ...(o.tls ? ["--tls-cert", '"$d/cert.pem"', "--tls-key", '"$d/key.pem"', "--ca", '"$d/ca.pem"'] : []),
    ...(o.config ? ["--config", '"$cfg/agent.json"'] : []),
  ];
  return [
    "srun",
    `--nodes=${o.nodes}`,
    "--ntasks-per-node=1",
    `--ntasks=${o.nodes}`,
    "--overlap",
    // One agent failing (refused, say) must not take the others down.
    "--kill-on-bad-exit=0",
    "--job-name=ebb-agents",
    // The agents' stdin: srun's, which ebb up holds open (closing it stops them).
    "--input=all",
    "--export=ALL",
    "sh",
    "-c",
    [...(o.tls ? tlsFiles : []), ...(o.config ? configFile : []), `exec ${agent.join(" ")}`].join("\n"),
  ];
}

export type SrunProcess = Subprocess<"pipe", "ignore", "pipe">;
