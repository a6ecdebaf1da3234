import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  DeleteItemCommand,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localClient } from '../../infra/local/dynamodb.js';
import { DUPLICATE_ITEM_MESSAGE } from '../../infra/local/dynamodb-limits.js';
import { recipientsPerChunk } from '../../lib/domain/awards.js';
import { MAX_TRANSACTION_ITEMS } from '../../lib/store/table/transaction-items.js';
import { ctx, testContext, testEndpoint } from '../support/context.js';
import { customersViaStore } from '../support/customers.js';
import { itemSizeBytes } from '../support/item-size.js';
import { fund } from '../support/ledger.js';
import { newPlatform } from '../support/service.js';
import { createStreamFreeTables, ownTableNames } from '../support/tables.js';

/**
 * DynamoDB's request limits hold in the local stack as on AWS: through the service's own client (the tests'
 * context, built as `npm start` builds it), each limit is refused with DynamoDB's error and nothing written.
 * Most are DynamoDB Local's own enforcement, held here so a DynamoDB Local that stopped enforcing one fails
 * this file; a transaction naming one item twice is refused by infra/local/dynamodb-limits.ts, since
 * DynamoDB Local lets a failed condition answer first. Then the largest thing the service writes (an award
 * distribution to the most recipients a request may name) stays within them.
 */

// Tables of this file's own: megabyte items would slow every later file's scans of the shared ones.
const tables = ownTableNames('limits');
const limitsCtx = testContext({ tables });
const KB = 1024;
const MAX_ITEM_BYTES = 400 * KB;
const MAX_TRANSACTION_BYTES = 4 * KB * KB;

beforeAll(async () => {
  await createStreamFreeTables(testEndpoint(), tables);
});

const key = (name: string) => ({ pk: `TEST#limits#${name}`, sk: 'item' });

/** An item under `name` whose size, by DynamoDB's rules (attribute names and values), is exactly `bytes`. */
function itemOfSize(name: string, bytes: number): Record<string, string> {
  const base = { ...key(name), filler: '' };
  const padding = bytes - itemSizeBytes(marshalled(base));
  if (padding < 0) throw new Error(`an item under ${name} takes more than ${bytes} bytes`);
  return { ...base, filler: 'x'.repeat(padding) };
}

function marshalled(item: Record<string, string>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(item).map(([name, value]) => [name, { S: value }]));
}

async function stored(name: string): Promise<Record<string, unknown> | undefined> {
  const out = await limitsCtx.db.send(
    new GetCommand({ TableName: tables.main, Key: key(name), ConsistentRead: true, ProjectionExpression: 'pk' }),
  );
  return out.Item;
}

/** The error a call failed with (the test fails if it succeeded). */
async function failure(call: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await call;
  } catch (error) {
    return error as Error;
  }
  throw new Error('the call succeeded');
}

const put = (item: Record<string, string>) => ({ Put: { TableName: tables.main, Item: item } });

describe('transactions: 100 actions', () => {
  it('commits 100 and refuses 101 with DynamoDB ValidationException, writing none of them', async () => {
    const run = randomUUID();
    const hundred = Array.from({ length: 100 }, (_, i) => put({ ...key(`${run}-${i}`) }));
    await limitsCtx.db.send(new TransactWriteCommand({ TransactItems: hundred }));
    expect(await stored(`${run}-99`)).toBeDefined();

    const again = randomUUID();
    const error = await failure(
      limitsCtx.db.send(
        new TransactWriteCommand({
          TransactItems: Array.from({ length: 101 }, (_, i) => put({ ...key(`${again}-${i}`) })),
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toContain('Member must have length less than or equal to 100');
    expect(error.$metadata?.httpStatusCode).toBe(400);
    expect(await stored(`${again}-0`)).toBeUndefined();
  });

  it('refuses a TransactGetItems of 101 items the same way', async () => {
    const gets = Array.from({ length: 101 }, (_, i) => ({ Get: { TableName: tables.main, Key: key(`get-${i}`) } }));
    const error = await failure(limitsCtx.db.send(new TransactGetCommand({ TransactItems: gets })));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toContain('Member must have length less than or equal to 100');
  });
});

describe('transactions: 4 MB', () => {
  it('commits items adding up to under 4 MB and refuses them past it, writing none', async () => {
    const run = randomUUID();
    const itemBytes = 380 * KB;
    const under = Array.from({ length: 10 }, (_, i) => put(itemOfSize(`${run}-under-${i}`, itemBytes)));
    expect(10 * itemBytes).toBeLessThan(MAX_TRANSACTION_BYTES);
    await limitsCtx.db.send(new TransactWriteCommand({ TransactItems: under }));
    expect(await stored(`${run}-under-9`)).toBeDefined();

    const over = Array.from({ length: 11 }, (_, i) => put(itemOfSize(`${run}-over-${i}`, itemBytes)));
    expect(11 * itemBytes).toBeGreaterThan(MAX_TRANSACTION_BYTES);
    const error = await failure(limitsCtx.db.send(new TransactWriteCommand({ TransactItems: over })));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toMatch(/Transaction .*size cannot exceed 4MB/);
    expect(await stored(`${run}-over-0`)).toBeUndefined();
  });
});

describe('items: 400 KB, measured as DynamoDB measures (attribute names and values)', () => {
  it('stores an item of exactly 400 KB and refuses one byte more, alone and in a transaction', async () => {
    const run = randomUUID();
    await limitsCtx.db.send(new PutCommand({ TableName: tables.main, Item: itemOfSize(`${run}-max`, MAX_ITEM_BYTES) }));
    expect(await stored(`${run}-max`)).toBeDefined();

    const over = itemOfSize(`${run}-over`, MAX_ITEM_BYTES + 1);
    const alone = await failure(limitsCtx.db.send(new PutCommand({ TableName: tables.main, Item: over })));
    expect(alone.name).toBe('ValidationException');
    expect(alone.message).toBe('Item size has exceeded the maximum allowed size');
    const inTransaction = await failure(limitsCtx.db.send(new TransactWriteCommand({ TransactItems: [put(over)] })));
    expect(inTransaction.name).toBe('ValidationException');
    expect(inTransaction.message).toBe('Item size has exceeded the maximum allowed size');
    expect(await stored(`${run}-over`)).toBeUndefined();
  });

  it('refuses an update whose result would pass 400 KB, leaving the item as it was', async () => {
    const run = randomUUID();
    await limitsCtx.db.send(new PutCommand({ TableName: tables.main, Item: itemOfSize(`${run}-grow`, 300 * KB) }));
    const grow = {
      TableName: tables.main,
      Key: key(`${run}-grow`),
      UpdateExpression: 'SET more = :more',
      ExpressionAttributeValues: { ':more': 'y'.repeat(200 * KB) },
    };
    const alone = await failure(limitsCtx.db.send(new UpdateCommand(grow)));
    expect(alone.name).toBe('ValidationException');
    expect(alone.message).toBe('Item size to update has exceeded the maximum allowed size');
    // In a transaction DynamoDB cancels it, naming the action (ValidationError).
    const inTransaction = await failure(
      limitsCtx.db.send(new TransactWriteCommand({ TransactItems: [{ Update: grow }] })),
    );
    expect(inTransaction).toBeInstanceOf(TransactionCanceledException);
    expect((inTransaction as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'ValidationError',
    ]);
    const item = await limitsCtx.db.send(
      new GetCommand({ TableName: tables.main, Key: key(`${run}-grow`), ConsistentRead: true }),
    );
    expect(item.Item?.more).toBeUndefined();
  });
});

describe('batches: 100 keys a BatchGetItem, 25 requests a BatchWriteItem', () => {
  it('refuses 101 keys and 26 writes with DynamoDB ValidationException', async () => {
    const run = randomUUID();
    const keys = (count: number) => Array.from({ length: count }, (_, i) => key(`${run}-${i}`));
    await limitsCtx.db.send(new BatchGetCommand({ RequestItems: { [tables.main]: { Keys: keys(100) } } }));
    const get = await failure(
      limitsCtx.db.send(new BatchGetCommand({ RequestItems: { [tables.main]: { Keys: keys(101) } } })),
    );
    expect(get.name).toBe('ValidationException');
    expect(get.message).toBe('Too many items requested for the BatchGetItem call');

    const writes = (count: number) => keys(count).map((Item) => ({ PutRequest: { Item } }));
    await limitsCtx.db.send(new BatchWriteCommand({ RequestItems: { [tables.main]: writes(25) } }));
    const write = await failure(
      limitsCtx.db.send(new BatchWriteCommand({ RequestItems: { [tables.main]: writes(26) } })),
    );
    expect(write.name).toBe('ValidationException');
    expect(write.message).toBe('Too many items requested for the BatchWriteItem call');
  });
});

describe('query pages: 1 MB', () => {
  it('ends a page past 1 MB read with LastEvaluatedKey, whatever Limit asks', async () => {
    const pk = `TEST#limits#page#${randomUUID()}`;
    const itemBytes = 390 * KB;
    for (let i = 0; i < 4; i++) {
      const item = itemOfSize('page', itemBytes);
      await limitsCtx.db.send(new PutCommand({ TableName: tables.main, Item: { ...item, pk, sk: `item#${i}` } }));
    }
    const query = (ExclusiveStartKey?: Record<string, unknown>) =>
      limitsCtx.db.send(
        new QueryCommand({
          TableName: tables.main,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          Limit: 100,
          ExclusiveStartKey,
        }),
      );
    const first = await query();
    // Three items pass 1 MB: DynamoDB stops there.
    expect(first.Items?.length).toBeLessThan(4);
    expect(first.LastEvaluatedKey).toBeDefined();
    const second = await query(first.LastEvaluatedKey);
    expect((first.Items?.length ?? 0) + (second.Items?.length ?? 0)).toBe(4);
  });
});

describe('one item twice in a transaction', () => {
  it('refuses two writes of one item with ValidationException', async () => {
    const run = randomUUID();
    const error = await failure(
      limitsCtx.db.send(
        new TransactWriteCommand({ TransactItems: [put({ ...key(run) }), put({ ...key(run), n: '2' })] }),
      ),
    );
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(DUPLICATE_ITEM_MESSAGE);
    expect(await stored(run)).toBeUndefined();
  });

  it('refuses a delete and a condition check of one item as DynamoDB does (DynamoDB Local alone answers a cancellation)', async () => {
    const run = randomUUID();
    await limitsCtx.db.send(new PutCommand({ TableName: tables.main, Item: key(run) }));
    const marshalledKey = marshalled(key(run));
    const actions: TransactWriteItem[] = [
      { Delete: { TableName: tables.main, Key: marshalledKey } },
      { ConditionCheck: { TableName: tables.main, Key: marshalledKey, ConditionExpression: 'attribute_exists(pk)' } },
    ];
    // DynamoDB Local without the middleware: the condition is evaluated first and fails.
    const bare = localClient(testEndpoint());
    try {
      const local = await failure(bare.send(new TransactWriteItemsCommand({ TransactItems: actions })));
      expect(local).toBeInstanceOf(TransactionCanceledException);
    } finally {
      bare.destroy();
    }
    // The local stack's client: refused before anything is evaluated, as DynamoDB refuses it.
    const error = await failure(limitsCtx.db.send(new TransactWriteItemsCommand({ TransactItems: actions })));
    expect(error.name).toBe('ValidationException');
    expect(error.message).toBe(DUPLICATE_ITEM_MESSAGE);
    expect(error.$metadata?.httpStatusCode).toBe(400);
    expect(await stored(run)).toBeDefined();
    // Two different items in one transaction go through as before.
    await limitsCtx.db.send(
      new TransactWriteItemsCommand({
        TransactItems: [actions[0]!, { Put: { TableName: tables.main, Item: marshalled(key(`${run}-other`)) } }],
      }),
    );
    expect(await stored(run)).toBeUndefined();
  });

  it('leaves items of other tables alone (a key in the TTL table is not one in the main table)', async () => {
    const run = `TEST#limits#${randomUUID()}`;
    await limitsCtx.db.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: tables.main, Item: { pk: { S: run }, sk: { S: 'item' } } } },
          { Put: { TableName: tables.ttl, Item: { pk: { S: run } } } },
        ],
      }),
    );
    await limitsCtx.db.send(new DeleteItemCommand({ TableName: tables.ttl, Key: { pk: { S: run } } }));
    await limitsCtx.db.send(new PutItemCommand({ TableName: tables.ttl, Item: { pk: { S: run } } }));
  });
});

describe("the service's largest writes stay within the limits", () => {
  const transactions: { actions: number; bytes: number }[] = [];
  let largestItemBytes = 0;
  // Every transaction the file's service sends, measured as it leaves: a Put's item, an Update's key and
  // values, another action's key.
  beforeAll(() => {
    ctx.db.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') {
          const actions = (args.input as { TransactItems: TransactWriteItem[] }).TransactItems;
          const sizes = actions.map((action) =>
            action.Update
              ? itemSizeBytes(action.Update.Key ?? {}) + itemSizeBytes(action.Update.ExpressionAttributeValues ?? {})
              : itemSizeBytes(action.Put?.Item ?? action.Delete?.Key ?? action.ConditionCheck?.Key ?? {}),
          );
          largestItemBytes = Math.max(largestItemBytes, ...sizes);
          transactions.push({ actions: actions.length, bytes: sizes.reduce((sum, size) => sum + size, 0) });
        }
        return next(args);
      },
      { step: 'build', name: 'measureTransactions', override: true },
    );
  });
  afterAll(() => {
    ctx.db.middlewareStack.remove('measureTransactions');
  });

  // Two full chunks: a chunk's transaction is the service's longest (its size is worked out from the action
  // limit, recipientsPerChunk). The 1,000-recipient distribution of awards.test.ts (a 68-action record
  // transaction) runs under the same enforcement.
  it('an award distribution: a full chunk goes up to the 100-action limit and stays far under 4 MB and 400 KB', async () => {
    const platform = await newPlatform();
    const customers = await customersViaStore(platform.platformCode, 2 * recipientsPerChunk(MAX_TRANSACTION_ITEMS));
    await fund(platform.participantCode, 'BTC', '1', 'awards');
    transactions.length = 0;
    const response = await platform.post('/awards/distribute', {
      asset: 'BTC',
      quantity: '0.00000100',
      participant_codes: customers,
    });
    expect(response.status, response.text).toBe(201);
    const most = Math.max(...transactions.map((t) => t.actions));
    const heaviest = Math.max(...transactions.map((t) => t.bytes));
    // The chunks are sized to the action limit (recipientsPerChunk): they go right up to it.
    expect(most).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
    expect(most).toBeGreaterThan(MAX_TRANSACTION_ITEMS - 10);
    expect(heaviest).toBeLessThan(MAX_TRANSACTION_BYTES / 4);
    expect(largestItemBytes).toBeLessThan(MAX_ITEM_BYTES / 4);
  }, 120_000);
});
