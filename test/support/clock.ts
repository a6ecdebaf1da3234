import type { Clock } from '../../lib/context.js';

/**
 * A clock tests can move: real time plus an offset. Its own module (no vitest import), so the simulation,
 * which runs outside vitest, moves its clock the same way.
 */
export class TestClock implements Clock {
  private offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  /** Shifts the clock by `ms` relative to real time (cumulative). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Back to real time. */
  reset(): void {
    this.offsetMs = 0;
  }
}
