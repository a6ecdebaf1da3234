/**
 * The service's notion of now. Everything that compares against time (signature windows, 72-hour windows,
 * quote expiry, settlement deadlines) reads it here, so tests can move time without waiting.
 */
let offsetMs = 0;

export const clock = {
  nowMs(): number {
    return Date.now() + offsetMs;
  },
  nowSeconds(): number {
    return Math.floor(clock.nowMs() / 1000);
  },
  /** Tests only: shift the clock by `ms` relative to real time (cumulative). */
  advance(ms: number): void {
    offsetMs += ms;
  },
  /** Tests only: back to real time. */
  reset(): void {
    offsetMs = 0;
  },
};
