/**
 * How deep the suite goes. `npm test` runs the short profile: every behaviour, with property runs and soaks
 * sized to keep the suite within minutes. `npm run test:long` (TEST_PROFILE=long) runs the same tests with
 * the long property runs and soaks, for a change to the ledger, the booking engine or the simulation.
 */
export const LONG_PROFILE = process.env.TEST_PROFILE === 'long';

/** `short` under `npm test`, `long` under `npm run test:long`. */
export function byProfile<T>(short: T, long: T): T {
  return LONG_PROFILE ? long : short;
}
