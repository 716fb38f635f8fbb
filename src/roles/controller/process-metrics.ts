/**
 * The process families operators expect beside the controller's own (the names of Prometheus'
 * process collector): CPU time, resident memory, open and allowed file descriptors, start time;
 * and how late the event loop runs, from a timer that measures its own lateness.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Family } from "../../util/prometheus.ts";

/** The lag timer's period, and how many periods the gauge's maximum spans. */
const TICK_MS = 500;
const WINDOW_TICKS = 20;

export class ProcessMetrics {
  private readonly startTime = Date.now() / 1000 - process.uptime();
  private readonly lags: number[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private expected = 0;

  /** Starts the lag timer (unref'd: it keeps nothing alive). */
  start(): this {
    this.expected = performance.now() + TICK_MS;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.lags.push(Math.max(0, now - this.expected) / 1000);
      if (this.lags.length > WINDOW_TICKS) this.lags.shift();
      this.expected = now + TICK_MS;
    }, TICK_MS);
    this.timer.unref?.();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  families(): Family[] {
    const cpu = process.cpuUsage();
    const gauge = (name: string, help: string, value: number): Family => ({ name, help, type: "gauge", samples: [{ value }] });
    const out: Family[] = [
      { name: "process_cpu_seconds_total", help: "User and system CPU time the controller's process has spent, in seconds", type: "counter", samples: [{ value: (cpu.user + cpu.system) / 1e6 }] },
      gauge("process_resident_memory_bytes", "Resident memory of the controller's process, in bytes", process.memoryUsage.rss()),
      gauge("process_start_time_seconds", "When the controller's process started, in seconds since the Unix epoch", this.startTime),
    ];
    const fds = openFds();
    if (fds !== undefined) out.push(gauge("process_open_fds", "File descriptors the controller's process has open", fds));
    const max = maxFds();
    if (max !== undefined) out.push(gauge("process_max_fds", "The controller's process's limit of open file descriptors", max));
    out.push(gauge("ebb_event_loop_lag_seconds", `The longest delay of the controller's event loop in the last ${(TICK_MS * WINDOW_TICKS) / 1000} s (how late a ${TICK_MS} ms timer fired)`, Math.max(0, ...this.lags)));
    return out;
  }
}

/** Entries of /proc/self/fd (Linux), or undefined where there is no such directory. */
function openFds(): number | undefined {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return undefined;
  }
}

function maxFds(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
