import type { AppContext } from '../../lib/context.js';
import type { AuditEntry } from '../../lib/store/audit.js';
import type { TaggedItem } from '../../lib/store/table/transaction-items.js';

/** Parsed flags: strings for valued options, true for switches (`--force`). */
export type Flags = Record<string, string | boolean | undefined>;

export interface OptionSpec {
  type: 'string' | 'boolean';
  required?: true;
}

/**
 * Who changed what and why, for a mutating command. A command whose change is one transaction puts
 * `item(changes)` in it (the change and its record commit together); any other calls `record(changes)` once
 * the change is made. The CLI records the command's result for a mutating command that did neither.
 */
export interface Audit {
  readonly operator: string;
  readonly reason: string;
  item(changes: Record<string, unknown>): TaggedItem;
  record(changes: Record<string, unknown>): Promise<void>;
}

/** The shape of an ops command: flags in, one JSON-able result out. */
export interface Command {
  /** The command's words and flags (`--reason` is added for a mutating command). */
  usage: string;
  options: Record<string, OptionSpec>;
  /** The flag name under which the command's one required positional word is passed (`migrate run NAME`); none takes no word. */
  positional?: string;
  /** Changes state: needs `--reason`, and the operator and reason are recorded with what it changed. */
  mutates?: true;
  /** Checks the flags' values before the CLI connects to anything (a usage error exits 2 having read and written nothing). */
  check?: (flags: Flags) => void;
  /** Runs with the context the CLI built for the tables it targets (or a test's own), and the command's audit. */
  run: (flags: Flags, ctx: AppContext, audit: Audit) => Promise<unknown>;
}
export type Commands = Record<string, Command>;

/** A mistake in how the CLI was called: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** A required option's value (presence and non-emptiness are checked by the parser already). */
export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optional(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

export type { AuditEntry };

/**
 * A result whose command wants a non-zero exit status (`ledger check`: 1 when it found a discrepancy). The
 * status rides on the result as a non-enumerable property, so the printed JSON is the result alone.
 */
export function withExitCode<T extends object>(result: T, exitCode: number): T {
  return Object.defineProperty(result, 'exitCode', { value: exitCode, enumerable: false });
}

export function exitCodeOf(result: unknown): number {
  const code = result && typeof result === 'object' ? (result as { exitCode?: unknown }).exitCode : undefined;
  return typeof code === 'number' ? code : 0;
}
