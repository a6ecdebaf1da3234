import type { Clock } from '../../lib/context.js';

/**
 * A clock tests can move: real time plus an offset. Its own module (no vitest import), so the simulation,
 * which runs outside vitest, moves its clock the same way.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  /** Set while the clock is held: time stands still but for `advance`. */
  private heldAtMs: number | undefined;

  nowMs(): number {
    return this.heldAtMs ?? Date.now() + this.offsetMs;
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  /** Shifts the clock by `ms` relative to real time (cumulative). */
  advance(ms: number): void {
    this.offsetMs += ms;
    if (this.heldAtMs !== undefined) this.heldAtMs += ms;
  }

  /**
   * Stops the clock where it is until `reset`: for a test whose claim holds within one second of the service's
   * time (a rate limit's burst), whatever a loaded machine makes its requests take.
   */
  hold(): void {
    this.heldAtMs = this.nowMs();
  }

  /** Back to real time. */
  reset(): void {
    this.offsetMs = 0;
    this.heldAtMs = undefined;
  }
}
