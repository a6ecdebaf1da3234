/**
 * A process that runs one trade's settlement and hangs at a chosen point, for a test to kill it there
 * (SIGKILL: no handler runs, as in a real crash). Env: DYNAMODB_ENDPOINT, TABLE_NAME, TTL_TABLE_NAME,
 * SECRETS_LOCAL_KEY (the test's), TRADE_ID, HANG ('before-attempt' | 'after-attempt').
 */
import { localConfig } from '../../infra/local/local-env.js';
import { LocalSettlementRunner } from '../../infra/local/workflow-runner.js';
import { bind as bindAttempt } from '../../functions/settlement/attempt-settlement.js';
import { createContext } from '../../lib/edge.js';
import { settlementInputFor } from '../../lib/settlement/start-settlement.js';
import { getTrade } from '../../lib/store/trades.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const ctx = createContext(
  localConfig(
    env('DYNAMODB_ENDPOINT'),
    { main: env('TABLE_NAME'), ttl: env('TTL_TABLE_NAME') },
    env('SECRETS_LOCAL_KEY'),
    { SETTLEMENT_SESSION_SECONDS: '1' },
  ),
);
const attempt = bindAttempt(ctx);
const hang = env('HANG');

const forever = () => new Promise<never>(() => undefined);
const runner = new LocalSettlementRunner(ctx, {
  tasks: {
    attempt: async (event) => {
      if (hang === 'before-attempt') {
        console.log('HUNG');
        return forever();
      }
      const result = await attempt(event as never);
      console.log('HUNG');
      return forever().then(() => result);
    },
  },
});
const trade = await getTrade(ctx, env('TRADE_ID'), { consistent: true });
if (!trade) throw new Error('no such trade');
await runner.start(settlementInputFor(ctx, trade));
console.log('STARTED');
