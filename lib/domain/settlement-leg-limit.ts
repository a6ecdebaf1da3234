// Its own module so that the configuration's schema, which every function loads, bounds the leg length
// without loading the settlement rules and decimal.js with them.

/** Step Functions ends a Standard execution after one year; a leg must end well before that. */
export const MAX_LEG_SECONDS = 360 * 24 * 3600;
