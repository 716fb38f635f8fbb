/**
 * The contract between ebb/comm ranks and their agent for elastic execution; specified, with the
 * rounds that use it, in docs/adaptation.md (§5.3, §7).
 *
 * Probe slots: the agent creates one file per step and node under /dev/shm and passes it as
 * EBB_ADAPT_SHM, with each rank's slot as EBB_ADAPT_SLOT. Int32 words:
 *
 *   [0]            target: the probe call at which every rank enters the window (0 = none)
 *   [1]            id of the adaptation whose window is published below (0 = none)
 *   [2]            byte length of that window description (JSON, see AdaptWindow)
 *   [SLOT(i)]      rank i's count of probe calls started (written by the rank only)
 *   bytes WINDOW.. the window: counts and the joining ranks' business cards, so that preexisting
 *                  ranks open it (adaptBegin) without asking the agent anything
 *
 * A rank's probeAdapt() stores count+1 in its slot and then reads the target: while the target is 0
 * or beyond its count nothing is pending, with no syscall and no message. At the target it asks its
 * agent (ebb-probe), which holds the answer until every rank of the job waits at that same call
 * (or releases them all if one ran past it before it could see the target: then a later target is
 * chosen, and all ranks meet there).
 *
 * Extension commands on the PMI connection (replies add rc=0):
 *   ebb-probe index=C        -> pending=0|1 status=staying|leaving adapt=<adaptation id>
 *   ebb-probe index=C fault=1   (the rank's world lost a member) held until the fault window
 *                            -> pending=1 status=staying adapt= fault=1 lost=<old ranks, comma-separated>
 *   ebb-begin                -> generation= staying= leaving= joining= rank= size= oldrank= oldsize= [lost=]
 *                               (cards of the new world are in the KVS under cardKey(rank, generation))
 *   ebb-commit               -> (once every rank of old and new world has committed, the window closes)
 *   ebb-perf iterations= loop_ns= comm_ns= [state_bytes=]   (libebb: the bytes the rank registered)
 */
import { PROTOCOL_VERSION } from "./version.ts";

/** The protocol version the agent passes its ranks (ENV.protocol); initAdapt() refuses another (docs/adaptation.md §10.4). */
export { PROTOCOL_VERSION };

export const TARGET = 0;
export const WINDOW_ID = 1;
export const WINDOW_LENGTH = 2;
/** Byte offset of the published window, after the 256 slots. */
export const WINDOW = 64 + 64 * 256;
export const ADAPT_SHM_BYTES = WINDOW + 512 * 1024;

/** What the agent publishes when a window opens. */
export interface AdaptWindow {
  adaptId: number;
  generation: number;
  staying: number;
  leaving: number;
  joining: number;
  oldSize: number;
  /** Business cards of the joining ranks, in new-world rank order. */
  cards: string[];
  /** A fault window: the old-world ranks that died (the survivors are renumbered in order). */
  lost?: number[];
}
/** Int32 index of local rank `i`'s probe counter (its own cache line). */
export const SLOT = (i: number) => 16 + 16 * i;
export const MAX_LOCAL_RANKS = 255;

export const ENV = {
  shm: "EBB_ADAPT_SHM",
  slot: "EBB_ADAPT_SLOT",
  status: "EBB_ADAPT_STATUS",
  generation: "EBB_ADAPT_GENERATION",
  /** The agent's PROTOCOL_VERSION; absent (an agent older than the check) counts as 0. */
  protocol: "EBB_ADAPT_PROTOCOL",
  sampleInterval: "EBB_SAMPLE_INTERVAL",
} as const;

export const CMD = {
  probe: "ebb-probe",
  begin: "ebb-begin",
  commit: "ebb-commit",
  perf: "ebb-perf",
  /** EPOP programs: `structure=<json>` once, then `pc= iteration= [bound=]` as they progress. */
  program: "ebb-program",
} as const;

/**
 * Checkpoint-restart worlds (libebb, src/c/ebb; docs/adaptation.md §12): KVS keys between the
 * launcher and the ranks, and the exit status of a rank that wrote its part for a restart.
 */
export const CR = {
  /** Put by rank 0 at ebb_init: this world resizes by checkpoint and restart. */
  flag: "ebbcr",
  /** Pre-put by the launcher: the job's checkpoint directory. */
  dir: "ebbcr.dir",
  /** Pre-put by the launcher in a restarted step: the checkpoint its ranks resume from. */
  resume: "ebbcr.resume",
  /** The window's KVS entry: `stay=S`, the old ranks whose node stays (they write to /dev/shm). */
  plan: (adaptId: number) => `ebbcr.a${adaptId}`,
  /** Put by rank 0 once the checkpoint is written: `ok`, or why it could not be. */
  written: (adaptId: number) => `ebbcr.w${adaptId}`,
  /** The checkpoint of a resize, under the checkpoint directory. */
  tag: (adaptId: number) => `a${adaptId}`,
  /** Names the newest complete periodic checkpoint, under the checkpoint directory. */
  latest: "latest",
  exitStatus: 75,
} as const;

/** KVS key of a rank's business card in a given world generation. Short: PMI-1 keys are limited too. */
export function cardKey(rank: number, generation = 0): string {
  return `ebbc.${generation}.${rank}`;
}
