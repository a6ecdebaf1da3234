/**
 * Assertions in the engine, after TigerBeetle: a condition the code relies on (a transition only forward, a
 * write conditioned on the state it read, a settlement's legs matching the trade) is checked where it must
 * hold, and a broken one stops the operation with an internal error (a 500, logged) rather than letting a
 * wrong write through. Never for a client's mistake: those are validation errors.
 */
export class AssertionFailure extends Error {
  override readonly name = 'AssertionFailure';
}

export function assert(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition)
    throw new AssertionFailure(`assertion failed: ${typeof message === 'function' ? message() : message}`);
}
