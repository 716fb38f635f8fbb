/**
 * The node's host state (domain/host-state.ts): every `interval` the agent samples what its rules
 * read (host-sample.ts, host-command.ts) and judges it (model/host-judge.ts). The controller hears
 * the state when it changes, once after each hello, and every `refresh` s (15) while its inputs
 * move (so listings show fresh inputs). Without rules the node is free, and says so once per hello.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { HostState } from "../../domain/host-state.ts";
import { firstJudgement, judge, type Judgement } from "../../model/host-judge.ts";
import type { HostRules } from "../../model/host-rules.ts";
import { logger } from "../../util/log.ts";
import { HostCommand } from "./host-command.ts";
import { HostSampler, type SampleSources } from "./host-sample.ts";

const log = logger("agent");

export class HostStates {
  private judgement: Judgement;
  private readonly sampler: HostSampler | undefined;
  private readonly commands: Map<string, HostCommand>;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastSent: { at: number; inputs: string } | undefined;

  constructor(
    private readonly rules: HostRules | undefined,
    sources: SampleSources,
    private readonly send: (h: HostState) => boolean,
  ) {
    this.judgement = firstJudgement(Date.now() / 1000);
    this.commands = new Map();
    if (!rules) return;
    this.sampler = new HostSampler(rules, sources);
    for (const r of rules.rules) if (r.command) this.commands.set(r.name, new HostCommand({ ...r, command: r.command }));
    this.sample();
    this.timer = setInterval(() => this.sample(), rules.interval * 1000);
    this.timer.unref?.();
    const cg = this.sampler.cgroupPath;
    if (cg && !existsSync(join(cg, "cpu.stat"))) log.warn(`host rule cpu.other: the cgroup ${cg} has no cpu.stat (not there yet, or not cgroup v2); cpu.other has no value until it does`);
    log.info(`host rules: ${rules.rules.map((r) => r.name).join(", ")}; state = ${rules.expressionText}, sampled every ${rules.interval} s${cg ? `; cpu.other is ${cg}'s CPU` : ""}`);
  }

  get current(): HostState {
    return this.judgement.host;
  }

  /** After a hello (welcome): the controller keeps no host state across a reconnect. */
  resend(): void {
    this.push();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    for (const c of this.commands.values()) c.stop();
  }

  private sample(): void {
    const nowMs = Date.now();
    const raw = this.sampler!.sample(nowMs / 1000);
    for (const [name, c] of this.commands) {
      c.tick(nowMs);
      raw[name] = c.latest();
    }
    const before = this.judgement.host.state;
    this.judgement = judge(this.rules!, this.judgement, nowMs / 1000, raw);
    const h = this.judgement.host;
    if (h.state !== before) {
      log.info(`host state ${before} -> ${h.state}${h.rule ? `: ${h.rule}` : ""}`, { inputs: h.inputs });
      this.push();
    } else if (this.lastSent && nowMs - this.lastSent.at >= this.rules!.refresh * 1000 && JSON.stringify(h.inputs) !== this.lastSent.inputs) this.push();
  }

  private push(): void {
    const h = this.judgement.host;
    if (this.send(h)) this.lastSent = { at: Date.now(), inputs: JSON.stringify(h.inputs) };
  }
}
