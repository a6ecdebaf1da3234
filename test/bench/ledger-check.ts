import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { createContext } from '../../lib/edge.js';
import { localConfig } from '../../infra/local/local-env.js';
import { ensureTables, freePort, startDynamoLocal } from '../../infra/local/dynamodb.js';
import { accountIdOf } from '../../lib/domain/ledger.js';
import { counterShardEntity } from '../../lib/store/entities/counter.js';
import { accountEntity, movementEntity, movementAccountEntryEntity } from '../../lib/store/entities/ledger.js';
import { eventEntity } from '../../lib/store/entities/event.js';
import { runLedgerCheck } from '../../lib/reconciliation/run-ledger-check.js';

/**
 * How long `ledger check` takes per million items on DynamoDB Local (docs/simulation.md, "The ledger check"): a consistent
 * ledger written with BatchWriteItem (accounts, each with its movements, movement entries and balance events,
 * the counters), then one unscoped check timed. `npx tsx test/bench/ledger-check.ts [accounts] [segments]`.
 */
const ACCOUNTS = Number(process.argv[2] ?? 10_000);
const SEGMENTS = Number(process.argv[3] ?? 4);
const MOVEMENTS_PER_ACCOUNT = 3;
const PLATFORM = 'BENCH1';

const dynamo = await startDynamoLocal({ port: await freePort() });
try {
  const tables = { main: 'bench-ledger-main', ttl: 'bench-ledger-ttl' };
  await ensureTables(dynamo.endpoint, tables);
  const ctx = createContext(
    localConfig(dynamo.endpoint, tables, Buffer.alloc(32, 7).toString('base64'), {
      LOG_LEVEL: 'error',
      AWS_REQUEST_TIMEOUT_MS: '60000',
    }),
  );
  const now = Date.now();
  const items: Record<string, unknown>[] = [];
  const boundary = { participant_code: 'SYS0EX', account_group: 'external', account_label: 'general', asset: 'USD' };
  let seeded = 0;
  const flush = async (force = false) => {
    while (items.length >= (force ? 1 : 25 * 16)) {
      const batch = items.splice(0, 25 * 16);
      await Promise.all(
        Array.from({ length: Math.ceil(batch.length / 25) }, async (_, i) => {
          let request: Record<string, any> | undefined = {
            [tables.main]: batch.slice(i * 25, i * 25 + 25).map((Item) => ({ PutRequest: { Item } })),
          };
          while (request && Object.keys(request).length > 0)
            request = (await ctx.db.send(new BatchWriteCommand({ RequestItems: request }))).UnprocessedItems;
        }),
      );
      seeded += batch.length;
    }
  };
  const seedStarted = Date.now();
  for (let a = 0; a < ACCOUNTS; a += 1) {
    const account = { participant_code: `C${a}`, account_group: PLATFORM, account_label: 'general', asset: 'USD' };
    const accountId = accountIdOf(account);
    let balance = 0;
    for (let m = 1; m <= MOVEMENTS_PER_ACCOUNT; m += 1) {
      const movementId = `m-${a}-${m}`;
      const amount = m * 10;
      balance += amount;
      const createdAt = now - 1000;
      items.push({
        ...movementEntity.key({ movement_id: movementId }),
        type: 'movement',
        movement_id: movementId,
        movement_type: 'deposit',
        reference: movementId,
        created_at: createdAt,
        platform_code: PLATFORM,
        legs: [
          { ...boundary, platform_code: null, amount: -amount },
          { ...account, platform_code: PLATFORM, amount },
        ],
      });
      items.push({
        ...movementAccountEntryEntity.key({ movement_id: movementId, account_id: accountId }),
        type: 'movement_account_entry',
        movement_id: movementId,
        account_id: accountId,
        platform_code: PLATFORM,
        change: amount,
        created_at: createdAt,
      });
      const eventId = `evt_${a}_${m}`;
      items.push({
        ...eventEntity.key({ event_id: eventId }),
        type: 'event',
        platform_code: PLATFORM,
        resource_id: accountId,
        body: JSON.stringify({
          id: eventId,
          type: 'account_balance.changed',
          created_at: createdAt,
          platform_code: PLATFORM,
          resource: { type: 'account', id: accountId },
          sequence: m,
          data: {
            account_id: accountId,
            balance: String(balance),
            movement: { movement_id: movementId, change: String(amount) },
          },
        }),
      });
    }
    items.push({
      ...accountEntity.key(account),
      type: 'account',
      ...account,
      account_id: accountId,
      platform_code: PLATFORM,
      balance,
      version: MOVEMENTS_PER_ACCOUNT,
      movement_count: MOVEMENTS_PER_ACCOUNT,
      last_update: now - 120_000,
    });
    await flush();
  }
  items.push({
    ...accountEntity.key(boundary),
    type: 'account',
    ...boundary,
    account_id: accountIdOf(boundary),
    balance: -ACCOUNTS * 60,
    last_update: now - 120_000,
  });
  items.push({
    ...counterShardEntity.key({ platform_code: PLATFORM, list: 'accounts', bucket: 'all', shard: 0 }),
    type: 'counter',
    n: ACCOUNTS,
  });
  items.push({
    ...counterShardEntity.key({ platform_code: PLATFORM, list: 'movements', bucket: 'all', shard: 0 }),
    type: 'counter',
    n: ACCOUNTS * MOVEMENTS_PER_ACCOUNT,
  });
  await flush(true);
  console.error(`seeded ${seeded} items in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);

  const started = Date.now();
  const report = await runLedgerCheck(ctx, { scope: {}, totalSegments: SEGMENTS });
  const elapsedMs = Date.now() - started;
  const heapMb = process.memoryUsage().heapUsed / 2 ** 20;
  console.log(
    JSON.stringify(
      {
        items: report.summary.items_scanned,
        clean: report.clean,
        discrepancies: report.summary.discrepancies,
        segments: SEGMENTS,
        elapsed_s: elapsedMs / 1000,
        seconds_per_million_items: (elapsedMs / 1000) * (1e6 / report.summary.items_scanned),
        heap_mb_after: Math.round(heapMb),
      },
      null,
      2,
    ),
  );
} finally {
  await dynamo.stop();
}
