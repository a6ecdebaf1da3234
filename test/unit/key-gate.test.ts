import { describe, expect, it } from 'vitest';
import { KeyGate, PRESENT_FOR_MS } from '../../infra/local/key-gate.js';

/** Tasks that run until the test releases them, recording the order they started in. */
function tasks() {
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const task = (name: string) => async () => {
    started.push(name);
    await new Promise<void>((resolve) => releases.set(name, resolve));
    return name;
  };
  const release = (...names: string[]) => names.forEach((name) => releases.get(name)!());
  return { started, task, release };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyGate (npm start: fair shares per API key)', () => {
  it('lets a key alone run every request it sends at once', async () => {
    const gate = new KeyGate(1, () => 0);
    const { started, task, release } = tasks();
    const names = Array.from({ length: 20 }, (_, i) => `a${i}`);
    const running = names.map((name) => gate.run('key-a', task(name)));
    await settle();
    expect(started).toEqual(names);
    release(...names);
    expect(await Promise.all(running)).toEqual(names);
  });

  it('runs perKey requests per key while another key is present: the newcomer goes straight in, the busy key waits behind itself, in order', async () => {
    let now = 0;
    const gate = new KeyGate(2, () => now);
    const { started, task, release } = tasks();
    const busy = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((name) => gate.run('key-a', task(name)));
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6']);

    now = 10;
    const others = ['b1', 'b2', 'b3'].map((name) => gate.run('key-b', task(name)));
    const more = ['a7', 'a8', 'a9'].map((name) => gate.run('key-a', task(name)));
    await settle();
    // Key b's first two go straight in; key a, six running, starts nothing more until it is under two.
    expect(started.slice(6)).toEqual(['b1', 'b2']);
    release('a1', 'a2', 'a3', 'a4', 'a5');
    await settle();
    expect(started.slice(8)).toEqual(['a7']);
    release('a6', 'b1');
    await settle();
    expect(started.slice(9).sort()).toEqual(['a8', 'b3']);
    release('a7', 'a8', 'b2', 'b3');
    await Promise.all([...others, ...busy]);

    // Once key b has been silent for a while, key a has the machine again.
    now = 10 + PRESENT_FOR_MS + 1;
    const later = ['a10', 'a11', 'a12'].map((name) => gate.run('key-a', task(name)));
    await settle();
    expect(started.slice(-4)).toEqual(['a9', 'a10', 'a11', 'a12']);
    release('a9', 'a10', 'a11', 'a12');
    await Promise.all([...more, ...later]);
  });

  it('holds a key with a backlog back while a key calling one at a time is present: its next request waits as long as its last took', async () => {
    let now = 0;
    const naps: { ms: number; wake: () => void }[] = [];
    const sleep = (ms: number) => new Promise<void>((wake) => naps.push({ ms, wake }));
    const gate = new KeyGate(1, () => now, sleep);
    const { started, task, release } = tasks();
    const quiet = gate.run('key-b', task('b1'));
    const batch = ['a1', 'a2', 'a3'].map((name) => gate.run('key-a', task(name)));
    await settle();
    expect(started).toEqual(['b1', 'a1']);

    release('b1');
    await quiet;
    now = 30;
    release('a1');
    await settle();
    // a1 took 30 ms and a2, a3 wait: a2 starts 30 ms later, not at once.
    expect(naps.map((nap) => nap.ms)).toEqual([30]);
    expect(started).toEqual(['b1', 'a1']);

    // Meanwhile the quiet key's next request goes straight in: it has no backlog, so it never waits.
    const next = gate.run('key-b', task('b2'));
    await settle();
    expect(started).toEqual(['b1', 'a1', 'b2']);
    release('b2');
    await next;

    now = 60;
    naps.shift()!.wake();
    await settle();
    expect(started).toEqual(['b1', 'a1', 'b2', 'a2']);

    // Once the quiet key has been silent past PRESENT_FOR_MS, nobody is left to yield to.
    now = 30 + PRESENT_FOR_MS + 1;
    release('a2');
    await settle();
    expect(naps).toEqual([]);
    expect(started).toEqual(['b1', 'a1', 'b2', 'a2', 'a3']);
    release('a3');
    await Promise.all(batch);
  });

  it('holds nobody back when every key present has a backlog: they share the machine as before', async () => {
    let now = 0;
    const naps: number[] = [];
    const gate = new KeyGate(
      1,
      () => now,
      async (ms) => {
        naps.push(ms);
      },
    );
    const { started, task, release } = tasks();
    const b = [gate.run('key-b', task('b1'))];
    const a = ['a1', 'a2', 'a3'].map((name) => gate.run('key-a', task(name)));
    b.push(...['b2', 'b3'].map((name) => gate.run('key-b', task(name))));
    await settle();
    // One each runs; the rest wait behind their own keys.
    expect(started).toEqual(['b1', 'a1']);
    now = 50;
    release('b1');
    await settle();
    expect(started).toEqual(['b1', 'a1', 'b2']);
    now = 100;
    release('a1');
    await settle();
    expect(started).toEqual(['b1', 'a1', 'b2', 'a2']);
    expect(naps).toEqual([]);
    release('a2', 'b2');
    await settle();
    release('a3', 'b3');
    await Promise.all([...a, ...b]);
  });

  it('passes a failure through and frees the slot', async () => {
    const gate = new KeyGate(1);
    await expect(
      gate.run('k', async () => {
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');
    expect(await gate.run('k', async () => 'next')).toBe('next');
  });

  it('refuses a share that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new KeyGate(bad)).toThrow(/positive integer/);
  });
});
