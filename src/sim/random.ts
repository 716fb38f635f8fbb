/**
 * A small seeded PRNG (mulberry32) so that a simulation is the same for the same seed on every
 * machine. Independent streams for independent draws: `stream(seed, "malleable")` does not shift
 * when another stream draws more or fewer numbers.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number;
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, uniform: (lo, hi) => lo + (hi - lo) * next() };
}

/** FNV-1a over the label, mixed with the seed. */
export function stream(seed: number, label: string): Rng {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (seed >>> 16), 0x85ebca6b) >>> 0;
  return mulberry32(h);
}
