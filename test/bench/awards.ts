import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { localClient } from '../../infra/local/dynamodb.js';
import { ESCROW_LANES } from '../../lib/domain/awards.js';
import { parseCustomer } from '../../lib/domain/customers.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { setReferencePrice } from '../../lib/pricing/price-source.js';
import { createCustomer } from '../../lib/store/participants.js';
import { expectStatus, type BenchPlatform } from './client.js';
import { adultBody } from './fixtures.js';
import { describeCalls, type DynamoMeter } from './stack.js';
import { benchCtx } from './stack.js';

export interface AwardsResult {
  /** Seconds for one POST /awards/distribute to `recipients` customers. */
  seconds: number;
  recipients: number;
  callsPerRequest: number;
  calls: string;
  /** The control: the request's own transactions sent straight to DynamoDB Local (`replayRaw`). */
  control: { seconds: number; transactions: number; inFlight: number };
  /** seconds ÷ control.seconds: what the distribution takes beyond DynamoDB Local's own time for its writes. */
  ratio: number;
}

const EACH = '0.0001';

/**
 * awards_control_ratio (and awards_1000_s): one POST /awards/distribute naming `recipients` customers (the most one request may),
 * from a pool bought through POST /awards/fund. The customers are created through the store's onboarding
 * path, not HTTP: a thousand onboarding requests would only slow the setup down.
 */
export async function measureAwards(
  platform: BenchPlatform,
  meter: DynamoMeter,
  recipients: number,
  dynamoEndpoint: string,
): Promise<AwardsResult> {
  await setReferencePrice(benchCtx(), 'BTC', 'USD', '40000');
  await deposit(benchCtx(), {
    reference: randomUUID(),
    participantCode: platform.participantCode,
    asset: 'USD',
    amount: '1000000',
  });
  const pool = (Number(EACH) * recipients).toFixed(8);
  const funded = await platform.client.post('/awards/fund', {
    underlying: 'BTC',
    quoted_currency: 'USD',
    quantity: pool,
  });
  expectStatus(funded, 201, 'POST /awards/fund');

  const customers: string[] = [];
  // Fifty at a time keeps DynamoDB Local from being flooded by a thousand transactions at once.
  for (let start = 0; start < recipients; start += 50) {
    const batch = Array.from({ length: Math.min(50, recipients - start) }, () =>
      createCustomer(benchCtx(), platform.platformCode, parseCustomer(adultBody(), benchCtx().clock.nowMs())),
    );
    customers.push(...(await Promise.all(batch)).map((created) => created.participant_code));
  }

  const before = meter.snapshot();
  const transactions: TransactWriteCommandInput[] = [];
  meter.transactions = transactions;
  const response = await platform.client.request(
    'POST',
    '/awards/distribute',
    { asset: 'BTC', quantity: EACH, participant_codes: customers },
    { headers: { 'X-Request-Id': randomUUID() } },
  );
  expectStatus(response, 201, 'POST /awards/distribute');
  const spent = meter.since(before);
  meter.transactions = undefined;
  if (response.body.message.confirms.length !== recipients)
    throw new Error(`POST /awards/distribute confirmed ${response.body.message.confirms.length} of ${recipients}`);
  const seconds = response.ms / 1000;
  const control = {
    seconds: await replayRaw(dynamoEndpoint, transactions),
    transactions: transactions.length,
    inFlight: ESCROW_LANES,
  };
  return {
    seconds,
    recipients,
    callsPerRequest: spent.calls,
    calls: describeCalls(spent.byCommand),
    control,
    ratio: seconds / control.seconds,
  };
}

/**
 * The control of awards_1000_s, measured in the same run: the distribution's own transactions, as the
 * handler sent them, sent again straight to DynamoDB Local, `ESCROW_LANES` at a time as the chunks' lanes
 * send them, into the same tables (same indexes, same stream: DynamoDB Local keeps every stream's records in
 * one SQLite table, and a second streamed table writes far slower than the first). Each item is set aside
 * under a partition key of its own (`CONTROL#…`, its index keys too, so no list shows it), its conditions are
 * left out (nothing they guard exists under those keys) and each transaction gets a token of its own. What
 * the distribution takes beyond this is the service's: its reads, its code, its waits between calls. Every run
 * measures it (awards_control_ratio); its 6,700 items and their stream records weigh on what runs after, so the
 * distributions come late in a run (test/bench/run.ts), before only the list seeding.
 */
async function replayRaw(dynamoEndpoint: string, transactions: readonly TransactWriteCommandInput[]): Promise<number> {
  // A client of its own: the service's gives up on a call after AWS_REQUEST_TIMEOUT_MS and retries it.
  const db = DynamoDBDocumentClient.from(localClient(dynamoEndpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const aside = <T extends Record<string, unknown> | undefined>(item: T): T => {
    const moved: Record<string, unknown> = { ...item };
    for (const key of ['pk', 'gsi1pk', 'gsi2pk', 'gsi3pk'])
      if (typeof moved[key] === 'string') moved[key] = `CONTROL#${moved[key]}`;
    return moved as T;
  };
  const unconditioned = transactions.map(
    (input): TransactWriteCommandInput => ({
      TransactItems: (input.TransactItems ?? []).map(({ Put, Update, Delete, ConditionCheck }) => {
        if (Put) return { Put: { TableName: Put.TableName, Item: aside(Put.Item) } };
        if (Delete) return { Delete: { TableName: Delete.TableName, Key: aside(Delete.Key) } };
        if (Update)
          return {
            Update: {
              TableName: Update.TableName,
              Key: aside(Update.Key),
              UpdateExpression: Update.UpdateExpression,
              ...namesAndValuesOf(Update.UpdateExpression!, Update),
            },
          };
        // Still a read of the item named, with a condition that always holds.
        return {
          ConditionCheck: {
            TableName: ConditionCheck!.TableName,
            Key: aside(ConditionCheck!.Key),
            ConditionExpression: 'attribute_exists(pk) OR attribute_not_exists(pk)',
          },
        };
      }),
      ClientRequestToken: randomUUID(),
    }),
  );
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: ESCROW_LANES }, async () => {
      while (next < unconditioned.length) await db.send(new TransactWriteCommand(unconditioned[next++]!));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  db.destroy();
  return seconds;
}

/** The attribute names and values `expression` refers to: DynamoDB refuses any that are sent unused. */
function namesAndValuesOf(
  expression: string,
  from: { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> },
) {
  const used = (placeholders: Record<string, unknown> | undefined) =>
    placeholders &&
    Object.fromEntries(Object.entries(placeholders).filter(([name]) => new RegExp(`${name}\\b`).test(expression)));
  const names = used(from.ExpressionAttributeNames) as Record<string, string> | undefined;
  const values = used(from.ExpressionAttributeValues);
  return {
    ...(names && Object.keys(names).length > 0 && { ExpressionAttributeNames: names }),
    ...(values && Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
  };
}
