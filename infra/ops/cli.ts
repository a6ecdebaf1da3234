import { readStackInfo, useLocalTables } from '../local/local-env.js';
import { UsageError, type Commands, type Flags } from './command.js';
import { ledgerCommands } from './ledger-commands.js';
import { paymentCommands } from './payment-commands.js';
import { platformCommands } from './platform-commands.js';
import { pricingCommands } from './pricing-commands.js';
import { tradeCommands } from './trade-commands.js';
import { withdrawalCommands } from './withdrawal-commands.js';
import { awardCommands } from './award-commands.js';

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
};

function connect(): void {
  if (process.env.TABLE_NAME && process.env.TTL_TABLE_NAME) return;
  const stack = readStackInfo();
  if (!stack) {
    throw new UsageError(
      'no running local stack found (start one with `npm start`), and TABLE_NAME/TTL_TABLE_NAME are not set for deployed tables',
    );
  }
  useLocalTables(stack.dynamodb_endpoint, { main: stack.table_name, ttl: stack.ttl_table_name });
}

export function usage(): string {
  return ['usage: npm run admin -- <command>', ...Object.values(commands).map((command) => `  ${command.usage}`)].join('\n');
}

/** `--name value` and `--name=value` pairs; every flag takes a value. */
function parseFlags(args: string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}'\n${usage()}`);
    const eq = arg.indexOf('=');
    if (eq !== -1) flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    else {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
      i++;
    }
  }
  return flags;
}

/** Runs one command. `connectToTables: false` is for tests that have already pointed the process at tables. */
export async function runAdmin(argv: string[], options: { connectToTables?: boolean } = {}): Promise<unknown> {
  // Commands are one word (`deposit`) or two (`platform create`).
  const words = commands[argv.slice(0, 2).join(' ')] ? 2 : 1;
  const command = commands[argv.slice(0, words).join(' ')];
  if (!command) throw new UsageError(usage());
  const flags = parseFlags(argv.slice(words));
  if (options.connectToTables !== false) connect();
  return command.run(flags);
}
