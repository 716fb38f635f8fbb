/** Wire limits shared by the server and the client. Sources: MPICH `pmi_util.h`, Hydra `pmi_common.h`, MPICH `simple2pmi.h`. */

/** Longest PMI-1 line, newline included (`PMIU_MAXLINE`); MPICH's reader drops anything beyond. */
export const V1_MAX_LINE = 1024;

/** What `cmd=get_maxes` advertises (Hydra's values). */
export const KVSNAME_MAX = 256;
export const KEYLEN_MAX = 64;
export const VALLEN_MAX = 1024;

/**
 * Longest value an MPICH PMI-1 client receives intact. `PMI_Init` shrinks its value limit to
 * `1024 - kvsname_max - keylen_max - 30` (= 674 with the maxes above) and needs one byte for the
 * terminating NUL, so a longer value arrives truncated.
 */
export const V1_MAX_VALUE = V1_MAX_LINE - KVSNAME_MAX - KEYLEN_MAX - 30 - 1;

/** PMI-2 frame: 6 ASCII length characters, then the payload; MPICH caps the whole frame at 64 KiB. */
export const V2_LENGTH_FIELD = 6;
export const V2_MAX_FRAME = 64 * 1024;
export const V2_MAX_PAYLOAD = V2_MAX_FRAME - V2_LENGTH_FIELD;
/** `PMI2_MAX_VALLEN`: MPICH's PMI-2 parser rejects longer values. */
export const V2_MAX_VALUE = 1024;

/** A multi-line `mcmd=spawn` block may span many lines; cap the whole block. */
export const MCMD_MAX_BYTES = 64 * 1024;
export const MAX_SPAWN_COMMANDS = 1024;
export const MAX_SPAWN_ITEMS = 4096;

/** Requests a client may have outstanding before the server gives up on it. */
export const MAX_IN_FLIGHT = 64;
/** Bytes a lock-step (PMI-1) client may send ahead while a reply is pending. */
export const MAX_BUFFERED = 2 * V2_MAX_FRAME;

/**
 * Replies a rank has not read yet: above REPLY_HIGH_WATER its further requests wait unread (back-
 * pressure; its requests then count against MAX_BUFFERED), above MAX_REPLY_BACKLOG it is cut off.
 * A real client reads each reply before its next request, so it never comes near either.
 */
export const REPLY_HIGH_WATER = 64 * 1024;
export const MAX_REPLY_BACKLOG = 1 << 20;

/**
 * A step's key-value space, as every agent of the step holds it (all nodes' puts, after the fences,
 * plus this node's pending puts and node attributes): at most KVS_MAX_KEYS keys and KVS_MAX_BYTES
 * bytes of keys and values (UTF-8). A put past either is refused with an error reply naming the
 * cap; a fence whose merged result would pass it fails. Hydra and Slurm bound only a key's and a
 * value's length (64 and 1024) and let a step's count grow with the node's memory; Cray's PMI caps
 * the count (PMI_MAX_KVS_ENTRIES). MPICH puts about one business card (under 1 KiB) per rank, so
 * these hold a step of tens of thousands of ranks.
 */
export const KVS_MAX_KEYS = 65_536;
export const KVS_MAX_BYTES = 16 << 20;

/**
 * What one user's steps on a node may hold together in their key-value spaces, counted as each
 * step's caps count (keys, pending puts, node attributes, preput keys), a key counting
 * KVS_KEY_COST bytes more for what holding it costs the agent. Without it, the per-step caps were
 * no cap on one user: each of his steps on the node could hold KVS_MAX_BYTES.
 */
export const USER_KVS_MAX_BYTES = 64 << 20;
export const KVS_KEY_COST = 64;

/** Services a job may have published at once (PMI `publish_name` / `name-publish`); the controller holds them until the job ends. */
export const NAMES_MAX = 1024;

/**
 * What one user's ranks on a node may cost their PMI servers (the node's agent), all their steps'
 * together: PMI_BYTES_PER_SECOND on average, PMI_BURST_BYTES at once, a read counting its bytes,
 * PMI_READ_COST more, and PMI_REQUEST_COST more for each request in it (socket.ts `readCost`). Past
 * it the agent reads no more of them until the rate has paid it back: nothing is dropped, a
 * flooding rank just waits, and the agent's thread serves every other user's ranks meanwhile.
 * Measured (the agent's CPU, load 10-30): a request costs it ~6 us and ~30 ns a byte (14-byte
 * `cmd=get_maxes`: 6 us; a 600-byte put: 24 us), so a cost unit is about a byte's worth of its
 * CPU and the rate ~20% of its thread at most; counted by bytes alone, 1 MiB/s of get_maxes took
 * 44% of it. A 64-rank MPICH wire-up (hello: init, allreduce, finalize) sent ~50-65 KB in 765
 * reads, ~0.3 MB of cost: the burst holds a 1,024-rank one (MAX_RANKS_PER_NODE) about 3 times.
 * A user filling his 64 MiB of KVS (USER_KVS_MAX_BYTES) with 900-byte values takes ~10 s while paced.
 * The agent paces a user only while another user has a job on the node (roles/agent/pmi-pace.ts).
 */
export const PMI_BYTES_PER_SECOND = 8 << 20;
export const PMI_BURST_BYTES = 16 << 20;
export const PMI_READ_COST = 64;
export const PMI_REQUEST_COST = 256;
