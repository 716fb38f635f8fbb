import { existsSync } from "node:fs";

/**
 * --sleep's pause after an iteration. With EBB_TEST_PACE=FILE the pauses end once FILE exists: a
 * test paces a run while it resizes it, then lets it finish at full speed (the answer is the same).
 */
export async function pause(ms: number): Promise<void> {
  const gate = process.env.EBB_TEST_PACE;
  if (ms > 0 && !(gate && existsSync(gate))) await Bun.sleep(ms);
}

/** Flag parsing shared by the EPOP examples: `--name value`, numbers only; unknown flags are errors. */
export function numberFlags<K extends string>(prog: string, args: string[], defaults: Record<K, number>): Record<K, number> {
  const out = { ...defaults };
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i]!.replace(/^--/, "") as K;
    if (!args[i]!.startsWith("--") || !(name in defaults)) throw new Error(`${prog}: unknown flag ${args[i]} (known: ${Object.keys(defaults).map((k) => `--${k}`).join(" ")})`);
    const v = Number(args[i + 1]);
    if (args[i + 1] === undefined || !Number.isFinite(v) || v < 0) throw new Error(`${prog}: --${name} needs a non-negative number`);
    out[name] = v;
  }
  return out;
}

/** FNV-1a over the bytes of some Float64Arrays, as 8 hex digits. */
export function fingerprint(parts: Float64Array[]): string {
  let h = 0x811c9dc5;
  for (const p of parts) {
    const b = new Uint8Array(p.buffer, p.byteOffset, p.byteLength);
    for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
