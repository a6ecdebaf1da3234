import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { type AppContext } from '../../lib/context.js';
import { createContext, loadContext } from '../../lib/edge.js';
import { parseConfig } from '../../lib/config.js';
import { auditItem, newAuditEntry, recordAudit } from '../../lib/store/audit.js';
import { localConfig, readStackInfo } from '../local/local-env.js';
import { UsageError, type Audit, type Command, type Commands, type Flags } from './command.js';
import { ledgerCommands } from './ledger-commands.js';
import { paymentCommands } from './payment-commands.js';
import { platformCommands } from './platform-commands.js';
import { pricingCommands } from './pricing-commands.js';
import { tradeCommands } from './trade-commands.js';
import { withdrawalCommands } from './withdrawal-commands.js';
import { awardCommands } from './award-commands.js';
import { participantCommands } from './participant-commands.js';
import { reconciliationCommands } from './reconciliation-commands.js';
import { migrationCommands } from './migration-commands.js';

/**
 * The ops CLI (`npm run admin -- <group> <action> [--flags]`). With TABLE_NAME and TTL_TABLE_NAME in the
 * environment it works on those (deployed) tables; otherwise on the tables of the running `npm start`,
 * found through the file that stack writes in DATA_DIR. Each capability contributes its command map here.
 */
export const commands: Commands = {
  ...platformCommands,
  ...ledgerCommands,
  ...pricingCommands,
  ...paymentCommands,
  ...tradeCommands,
  ...withdrawalCommands,
  ...awardCommands,
  ...participantCommands,
  ...reconciliationCommands,
  ...migrationCommands,
};

/**
 * The context of the tables the CLI targets: deployed ones named in the environment (with the settlement
 * workflow when STATE_MACHINE_ARN names it, as a deployed function's), or the running local stack's.
 */
async function connect(): Promise<AppContext> {
  // Never traced: the X-Ray SDK records nothing outside Lambda.
  if (process.env.TABLE_NAME && process.env.TTL_TABLE_NAME)
    return loadContext({ ...parseConfig(process.env), TRACING: 'off' });
  const stack = readStackInfo();
  if (!stack) {
    throw new Error(
      'no running local stack found (start one with `npm start`), and TABLE_NAME/TTL_TABLE_NAME are not set for deployed tables',
    );
  }
  return createContext(localConfig(stack.dynamodb_endpoint, { main: stack.table_name, ttl: stack.ttl_table_name }));
}

const MAX_REASON_CHARS = 500;

function commandUsage(command: Command): string {
  return `usage: npm run admin -- ${command.usage}${command.mutates ? ' --reason TEXT' : ''}`;
}

export function usage(): string {
  return [
    'usage: npm run admin -- <command>',
    ...Object.values(commands).map((command) => `  ${command.usage}${command.mutates ? ' --reason TEXT' : ''}`),
  ].join('\n');
}

/**
 * `node:util` parseArgs in strict mode: an unknown or misspelled flag, a flag without its value, an empty
 * value, a missing required flag or a stray word is a usage error naming the command's usage, never
 * silently ignored (a misspelled `--account-lable` once booked to `general`).
 */
function parseFlags(command: Command, args: string[]): Flags {
  const options = {
    ...command.options,
    ...(command.mutates && { reason: { type: 'string' as const, required: true as const } }),
  };
  let values: Flags;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, { type: spec.type }])),
      strict: true,
      allowPositionals: true,
    }) as { values: Flags; positionals: string[] });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${commandUsage(command)}`);
  }
  const problems: string[] = [];
  if (command.positional) {
    const word = positionals.shift();
    if (word === undefined || word.trim() === '') problems.push(`${command.positional.toUpperCase()} is required`);
    else values[command.positional] = word;
  }
  if (positionals.length > 0)
    problems.push(
      `unexpected argument${positionals.length > 1 ? 's' : ''} ${positionals.map((word) => `'${word}'`).join(' ')}`,
    );
  for (const [name, spec] of Object.entries(options)) {
    const value = values[name];
    if (typeof value === 'string' && value.trim() === '') problems.push(`--${name} needs a non-empty value`);
    else if (spec.required && value === undefined) problems.push(`--${name} is required`);
  }
  if (typeof values.reason === 'string' && values.reason.length > MAX_REASON_CHARS)
    problems.push(`--reason is at most ${MAX_REASON_CHARS} characters`);
  if (problems.length > 0) throw new UsageError(`${problems.join('; ')}\n${commandUsage(command)}`);
  return values;
}

/** Who runs the command: `OPERATOR`, else the OS user. */
function operator(): string {
  const named = process.env.OPERATOR?.trim();
  if (named) return named;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

function auditFor(ctx: AppContext, commandName: string, reason: string): Audit & { recorded: boolean } {
  const who = operator();
  // Through JSON: decimals become their text, and nothing but plain data reaches the table.
  const entry = (changes: Record<string, unknown>) =>
    newAuditEntry({
      command: commandName,
      operator: who,
      reason,
      changes: JSON.parse(JSON.stringify(changes)) as Record<string, unknown>,
      at: ctx.clock.nowMs(),
    });
  const audit = {
    operator: who,
    reason,
    recorded: false,
    item: (changes: Record<string, unknown>) => {
      audit.recorded = true;
      return auditItem(ctx, entry(changes));
    },
    record: async (changes: Record<string, unknown>) => {
      audit.recorded = true;
      await recordAudit(ctx, entry(changes));
    },
  };
  return audit;
}

/** Runs one command. Tests pass the context of their own tables. */
export async function runAdmin(argv: string[], options: { ctx?: AppContext } = {}): Promise<unknown> {
  // Commands are one word (`deposit`) or two (`platform create`).
  const words = commands[argv.slice(0, 2).join(' ')] ? 2 : 1;
  const name = argv.slice(0, words).join(' ');
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command '${argv.slice(0, 2).join(' ')}'\n${usage()}`);
  // Every flag is checked before the CLI connects to anything.
  const flags = parseFlags(command, argv.slice(words));
  command.check?.(flags);
  const ctx = options.ctx ?? (await connect());
  const audit = auditFor(ctx, name, typeof flags.reason === 'string' ? flags.reason : '');
  const result = await command.run(flags, ctx, audit);
  if (command.mutates && !audit.recorded) await audit.record({ result });
  return result;
}
