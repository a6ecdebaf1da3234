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
  it('lets a key alone run perKey requests at once, in arrival order', async () => {
    const gate = new KeyGate(2, () => 0);
    const { started, task, release } = tasks();
    const running = ['a1', 'a2', 'a3'].map((name) => gate.run('key-a', task(name)));
    await settle();
    expect(started).toEqual(['a1', 'a2']);
    release('a2');
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3']);
    release('a1', 'a3');
    expect(await Promise.all(running)).toEqual(['a1', 'a2', 'a3']);
  });

  it('runs one request per key while another key is present: the newcomer goes straight in, the busy key waits behind itself', async () => {
    let now = 0;
    const gate = new KeyGate(4, () => now);
    const { started, task, release } = tasks();
    const busy = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((name) => gate.run('key-a', task(name)));
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4']);

    now = 10;
    const other = gate.run('key-b', task('b1'));
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
    // Key a's running requests finish; its next starts only when it has none left running (a share of one).
    release('a1', 'a2', 'a3');
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
    release('a4');
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'a5']);
    release('b1');
    expect(await other).toBe('b1');

    // Once key b has been silent for a while, key a has the machine again.
    now = 10 + PRESENT_FOR_MS + 1;
    const later = gate.run('key-a', task('a7'));
    release('a5');
    await settle();
    expect(started.slice(-2).sort()).toEqual(['a6', 'a7']);
    release('a6', 'a7');
    await Promise.all([...busy, later]);
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
