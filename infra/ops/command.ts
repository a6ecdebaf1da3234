/** The shape of an ops command: flags in, one JSON-able result out. */
export type Flags = Record<string, string | undefined>;
export interface Command {
  usage: string;
  run: (flags: Flags) => Promise<unknown>;
}
export type Commands = Record<string, Command>;

/** A mistake in how the CLI was called: printed without a stack, exit code 2. */
export class UsageError extends Error {}

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}
