/**
 * What every node of a step works out alike from its launch, worked out once per launch message in
 * this process. `ebb up`'s agents pass one launch down their tree in-process: every node gets the
 * same credential and spec objects, and each one's checks were O(nodes) (the credential's HMAC over
 * the node list, the list compared, the argv and environment digests, the node's index, the first
 * ranks): ~0.7 ms a node at 1,024 nodes, ~0.7 s of a launch on the agents' one thread.
 *
 * Only what does not depend on the node or the time is kept: the signature, whether the credential
 * names the step and its nodes, and whether it covers the spec. Expiry, single use, the node's
 * allocation and its place in the step are checked by each node as before. The parts of the spec
 * the verdict covers are frozen when it is first made, and a later launch reuses it only with the
 * very same objects: a verdict never outlives what it judged.
 */
import { decode, type Decoded } from "../../proto/channel.ts";
import { credentialMismatch, verifyCredential } from "../../proto/credential.ts";
import type { Credential, StepCredential } from "../../proto/common.ts";
import { StepDown, type StepSpec } from "../../proto/step.ts";
import { firstRanks, ranksByNode } from "../../sched/layout.ts";
import { stepNodeNames } from "./env.ts";
import { MAX_JSON_DEPTH } from "../../util/json.ts";
import { ranksPerNodeRefusal } from "../../domain/ranks-per-node.ts";
import { MAX_VARIABLE_BYTES } from "../../proto/requests.ts";

interface Verdict {
  key: string;
  spec: StepSpec;
  /** The spec's parts the verdict covers, as they were (frozen since). */
  parts: readonly unknown[];
  /** Why the launch is refused whatever the node (undefined: it is not). */
  refusal: string | undefined;
}

const verdicts = new WeakMap<StepCredential, Verdict>();

const partsOf = (spec: StepSpec): readonly unknown[] => [spec.jobId, spec.stepId, spec.cwd, spec.nodes, spec.tasks, spec.distribution, spec.argv, spec.apps, spec.env, spec.jobEnv, spec.outputFile];

function freeze(spec: StepSpec, cred: StepCredential): void {
  for (const o of [cred, cred.nodes, spec.nodes, spec.tasks, spec.distribution, spec.argv, spec.apps, spec.env, spec.jobEnv, spec.outputFile]) if (o) Object.freeze(o);
  for (const n of spec.nodes) Object.freeze(n);
}

function sameParts(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Why a launch of `spec` with `cred` is refused on any node (undefined: it is not), leaving out the
 * expiry: the signature under `key`, the credential naming the step and its nodes, and covering the
 * spec's argv, environments, working directory and output file.
 */
export function launchRefusal(key: string, cred: StepCredential, spec: StepSpec): string | undefined {
  const known = verdicts.get(cred);
  if (known && known.key === key && known.spec === spec && sameParts(known.parts, partsOf(spec))) return known.refusal;
  const refusal = judge(key, cred, spec);
  freeze(spec, cred);
  verdicts.set(cred, { key, spec, parts: partsOf(spec), refusal });
  return refusal;
}

const signatures = new WeakMap<Credential, { key: string; refusal: string | undefined }>();

/**
 * Whether the cluster key `key` signed `cred` (undefined: it did), computed once per credential
 * object and key: a launch from a socket is checked as it arrives (server.ts) and again with its
 * spec (launchRefusal), an HMAC each time. The credential is frozen first, so what was judged
 * cannot change under its verdict.
 */
export function signatureRefusal(key: string, cred: Credential): string | undefined {
  const known = signatures.get(cred);
  if (known && known.key === key) return known.refusal;
  Object.freeze(cred.nodes);
  Object.freeze(cred);
  const refusal = verifyCredential(key, cred, 0, { signatureOnly: true });
  signatures.set(cred, { key, refusal });
  return refusal;
}

function judge(key: string, cred: StepCredential, spec: StepSpec): string | undefined {
  const bad = signatureRefusal(key, cred);
  if (bad) return bad;
  const names = stepNodeNames(spec);
  if (cred.jobId !== spec.jobId || cred.stepId !== spec.stepId || cred.nodes.length !== names.length || cred.nodes.some((n, i) => n !== names[i])) return "the credential does not match the step";
  if (spec.tasks.length !== spec.nodes.length) return "tasks and nodes differ in length";
  if (spec.distribution && spec.elastic) return "an elastic step's ranks are numbered in blocks; it takes no distribution";
  const crowded = ranksPerNodeRefusal(spec.tasks.reduce((a, n) => Math.max(a, n), 0));
  if (crowded) return crowded;
  return credentialMismatch(cred, spec) ?? oversizedVariable(spec.env);
}

/**
 * Why no rank could start with this environment: a variable over MAX_VARIABLE_BYTES (execve says
 * E2BIG). Refused before the agent looks anything up in it: the program on a 13 MiB PATH of a
 * million directories took the agent's thread 1.8 s of CPU per launch (16 s at load 30).
 * The controller never sees a step's environment, only its digest.
 */
export function oversizedVariable(env: Record<string, string>): string | undefined {
  for (const k in env) {
    const v = env[k]!;
    // A UTF-16 unit is 1 to 3 UTF-8 bytes: most are known to fit without encoding them.
    if ((k.length + v.length) * 3 + 2 <= MAX_VARIABLE_BYTES) continue;
    const bytes = Buffer.byteLength(k) + Buffer.byteLength(v) + 2;
    if (bytes > MAX_VARIABLE_BYTES) return `environment variable ${k.slice(0, 64)} is ${bytes} bytes: Linux starts no process with a variable over ${MAX_VARIABLE_BYTES} (MAX_ARG_STRLEN)`;
  }
  return undefined;
}

/** Each node's index in the step by name, once per spec. */
const indexes = new WeakMap<StepSpec, Map<string, number>>();
export function nodeIndexIn(spec: StepSpec, name: string): number {
  let m = indexes.get(spec);
  if (!m) {
    m = new Map();
    const names = stepNodeNames(spec);
    // The first of a name, as indexOf found it.
    for (let i = names.length - 1; i >= 0; i--) m.set(names[i]!, i);
    indexes.set(spec, m);
  }
  return m.get(name) ?? -1;
}

/** The first rank of each node of a block step, once per spec (the tasks do not change once given). */
const firsts = new WeakMap<StepSpec, readonly number[]>();
/** Every node's ranks of a step numbered otherwise (StepSpec.distribution), once per spec. */
const rankLists = new WeakMap<StepSpec, ReadonlyArray<readonly number[]>>();

/**
 * The step ranks of node `index`. In blocks (the default), from the node's first rank: O(nodes)
 * once per spec, as each of a 1,024-node step's agents works it out; numbered otherwise, every
 * node's, once per spec.
 */
export function stepRanksOf(spec: StepSpec, index: number): readonly number[] {
  if (spec.distribution) return stepRanks(spec)[index] ?? [];
  let f = firsts.get(spec);
  if (!f) firsts.set(spec, (f = Object.freeze(firstRanks(spec.tasks))));
  const first = f[index]!;
  return Array.from({ length: spec.tasks[index] ?? 0 }, (_, k) => first + k);
}

/** Every node's step ranks, once per spec. */
export function stepRanks(spec: StepSpec): ReadonlyArray<readonly number[]> {
  let f = rankLists.get(spec);
  if (!f) rankLists.set(spec, (f = Object.freeze(ranksByNode(spec.tasks, spec.distribution))));
  return f;
}

/** The last launch decoded from a socket in this process (one VM: a thread of `ebb up`), by its text. */
let lastLaunch: { text: string; value: StepDown } | undefined;

/**
 * A step message from a socket, decoded and validated (proto/channel.ts `decode`). The agents of
 * one `ebb up` thread that are children of agents on other threads, or of the launcher, each get
 * the same launch text over a socket of their own (a 1,024-node step: ~69 KB, 1.5-3 ms to parse and
 * validate; ~40 sockets a launch over 2 threads). The text that was the last launch decoded here
 * gets that decoding's objects again, as agents of one thread share a launch passed in-process:
 * the checks made once per launch objects (launchRefusal, nodeIndexIn, stepRanks) then serve
 * them all. A pure function of the text; one launch is kept, until the next.
 */
export function decodeStepDown(text: string | Buffer): Decoded<StepDown> {
  if (typeof text === "string" && lastLaunch?.text === text) return { ok: true, value: lastLaunch.value };
  // Launchers run as their users, and a peer is not authenticated before its first message.
  const d = decode(StepDown, text, MAX_JSON_DEPTH);
  if (d.ok && d.value.t === "launch" && typeof text === "string") lastLaunch = { text, value: d.value };
  return d;
}
