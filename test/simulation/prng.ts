/**
 * The simulation's randomness, all of it from one seed (TigerBeetle's VOPR: a failure replays from its seed).
 *
 * Two kinds of draw. The operations come from one sequential stream (`Prng`), drawn before anything runs,
 * so a seed always gives the same operations. Fault decisions are made while operations run concurrently,
 * where the order of DynamoDB calls across operations depends on the machine's scheduling; so each decision
 * is a hash of the seed and where it is taken (the operation's index, its request attempt, the call's ordinal
 * within that request), and the same seed takes the same decision at the same place whatever ran beside it.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // sfc32 seeded through splitmix32, so nearby seeds give unrelated streams.
    const mix = splitmix32(seed);
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A key of `weights` drawn in proportion to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let draw = this.next() * total;
    for (const [key, weight] of entries) {
      draw -= weight;
      if (draw < 0) return key;
    }
    return entries.at(-1)![0];
  }

  /** A UUID (v4 layout) from the stream, so ids in requests replay too. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.next() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((Number.parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A draw in [0, 1) determined by the seed and a place (FNV-1a over the place, finished by a splitmix round). */
export function keyedDraw(seed: number, place: string): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < place.length; i++) hash = Math.imul(hash ^ place.charCodeAt(i), 0x01000193);
  return splitmix32(hash)() / 4294967296;
}
