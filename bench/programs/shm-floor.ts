// The floor under ebb/comm's one-node latency: a bare JavaScript 8 B ping-pong between two Bun
// processes over one shared-memory file (Bun.mmap of /dev/shm, as ebb/comm's rings), no ebb/comm.
// Each side has a 64-byte line: a 32-bit counter it alone writes (Atomics.store) and the 8 B
// payload beside it; the other side polls that counter (Atomics.load) and copies the payload out.
// Modes:
//   sync   a tight loop, no promises: what JavaScript on Bun can do at all.
//   await  the API's shape: `await send()` (a resolved promise) and `await recv()`, a promise
//          settled by a polling loop run from microtasks (32 passes a turn, as ebb/comm's), so
//          each message costs the promise turn an `await recv()` costs any JS library.
// Usage: bun shm-floor.ts MODE [CPU]: rank 0 makes the file and starts rank 1, pinned to CPU with
// taskset when given (run rank 0 under `taskset -c` another CPU: the sync mode on one core crawls).
// Prints what pingpong-rtt.ts prints of the ping-pong ("rtt p10=. p50=. p90=. p99=. mean=." and
// "cpu rank=R ns_per_rtt=.", ns, 20,000 single round trips after 100,000 untimed ones).
// Neither mode ever gives its core away: on a loaded machine its mean is the scheduler's (a side
// spins out its time slice while its peer waits for a core); its percentiles still hold.
import { closeSync, ftruncateSync, openSync, unlinkSync } from "node:fs";

const mode = process.argv[2] === "await" ? "await" : "sync";
const cpu1 = process.argv[3];
const path = process.env.EBB_FLOOR_FILE;
const rank = path ? 1 : 0;
const file = path ?? `/dev/shm/ebb-floor-${process.pid}`;
if (rank === 0) {
  const fd = openSync(file, "wx", 0o600);
  ftruncateSync(fd, 4096);
  closeSync(fd);
}
const map = Bun.mmap(file, { shared: true });
const words = new Int32Array(map.buffer as ArrayBuffer, map.byteOffset, 1024);
const bytes = new Uint8Array(map.buffer as ArrayBuffer, map.byteOffset, 4096);
const MINE = rank === 0 ? 0 : 16; // word index of my counter (line 0 or line 1)
const THEIRS = 16 - MINE;
const buf = new Uint8Array(8);
const into = new Uint8Array(8);
let sent = 0;
let got = 0;

function put(): void {
  const at = MINE * 4 + 8;
  for (let i = 0; i < 8; i++) bytes[at + i] = buf[i]!;
  Atomics.store(words, MINE, ++sent);
}
function take(): void {
  const at = THEIRS * 4 + 8;
  for (let i = 0; i < 8; i++) into[i] = bytes[at + i]!;
  got++;
}

// ---- the await mode's receive: one waiting promise, settled by microtask polling ----
const RESOLVED = Promise.resolve();
let waiter: (() => void) | undefined;
let spinning = false;
const spin = (): void => {
  for (let k = 0; k < 32; k++) {
    if (Atomics.load(words, THEIRS) !== got) {
      take();
      const w = waiter!;
      waiter = undefined;
      spinning = false;
      w();
      return;
    }
  }
  queueMicrotask(spin);
};
function recvAsync(): Promise<void> {
  if (Atomics.load(words, THEIRS) !== got) {
    take();
    return RESOLVED;
  }
  const p = new Promise<void>((ok) => {
    waiter = ok;
  });
  if (!spinning) {
    spinning = true;
    queueMicrotask(spin);
  }
  return p;
}
function sendAsync(): Promise<void> {
  put();
  return RESOLVED;
}
function recvSync(): void {
  while (Atomics.load(words, THEIRS) === got);
  take();
}

const N = 20000;
const WARM = 100000;
const rtt = new Float64Array(N);
let child: ReturnType<typeof Bun.spawn> | undefined;
if (rank === 0) {
  const argv = [process.execPath, import.meta.path, mode];
  child = Bun.spawn(cpu1 ? ["taskset", "-c", cpu1, ...argv] : argv, { env: { ...process.env, EBB_FLOOR_FILE: file }, stdout: "inherit", stderr: "inherit" });
  while (Atomics.load(words, THEIRS) === 0) await Bun.sleep(1); // rank 1 is up: it writes 1 first
  got = 1;
  unlinkSync(file);
} else {
  Atomics.store(words, MINE, ++sent);
}
let c0 = process.cpuUsage();
for (let i = -WARM; i < N; i++) {
  if (i === 0) c0 = process.cpuUsage();
  if (rank === 0) {
    const t = Bun.nanoseconds();
    if (mode === "sync") {
      put();
      recvSync();
    } else {
      await sendAsync();
      await recvAsync();
    }
    if (i >= 0) rtt[i] = Bun.nanoseconds() - t;
  } else if (mode === "sync") {
    recvSync();
    put();
  } else {
    await recvAsync();
    await sendAsync();
  }
}
const c = process.cpuUsage(c0);
console.log(`cpu rank=${rank} ns_per_rtt=${(((c.user + c.system) * 1000) / N).toFixed(0)}`);
if (rank === 0) {
  const s = Array.from(rtt).sort((a, b) => a - b);
  const mean = s.reduce((a, x) => a + x, 0) / N;
  console.log(`rtt p10=${s[N / 10]!.toFixed(0)} p50=${s[N / 2]!.toFixed(0)} p90=${s[(N * 9) / 10]!.toFixed(0)} p99=${s[(N * 99) / 100]!.toFixed(0)} mean=${mean.toFixed(0)}`);
  await child!.exited;
}
