import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { batchGetItems } from '../../lib/store/table/batch-get.js';
import { clientWith, ctx, testContext } from '../support/context.js';
import { nothingProcessed } from '../support/raw-response.js';

/**
 * The store's batch read (`lib/store/table/batch-get.ts`) against DynamoDB Local: more keys than one
 * BatchGetItem takes go out as several calls at once, and a call DynamoDB answers with unprocessed keys is
 * asked again without losing what the others returned.
 */

/** `count` items under keys of this test's own, written with BatchWriteItem; their keys. */
async function storedItems(count: number): Promise<Record<string, string>[]> {
  const prefix = `TEST#batch-read#${randomUUID()}`;
  const keys = Array.from({ length: count }, (_, i) => ({ pk: `${prefix}#${i}`, sk: 'item' }));
  for (let start = 0; start < keys.length; start += 25) {
    const items = keys.slice(start, start + 25).map((key) => ({ ...key, n: key.pk.split('#').at(-1) }));
    await ctx.db.send(
      new BatchWriteCommand({ RequestItems: { [ctx.tables.main]: items.map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
  return keys;
}

describe('batch reads of more than 100 keys', () => {
  it('sends the BatchGetItems of one read side by side and returns every stored item once', async () => {
    const keys = await storedItems(450);
    const absent = Array.from({ length: 30 }, (_, i) => ({
      pk: `TEST#batch-read#absent#${randomUUID()}#${i}`,
      sk: 'item',
    }));
    const calls = { now: 0, most: 0, total: 0 };
    const db = clientWith(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        calls.total++;
        calls.most = Math.max(calls.most, ++calls.now);
        try {
          return await next(args);
        } finally {
          calls.now--;
        }
      },
      'countBatchReads',
      'initialize',
    );

    const found = await batchGetItems(testContext({ db }), [...keys, ...absent], {
      consistent: true,
      what: 'test read',
    });

    expect(calls.total).toBe(5);
    expect(calls.most).toBeGreaterThan(1);
    expect(found.map((item) => item.pk).sort()).toEqual(keys.map((key) => key.pk).sort());
  });

  it('fails only once every call of the read has ended, so none goes on after its caller answered', async () => {
    const keys = await storedItems(300);
    const calls = { now: 0 };
    const db = clientWith(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        calls.now++;
        try {
          const asked = (args.input as { RequestItems: Record<string, { Keys: { pk: string }[] }> }).RequestItems;
          // The call holding the first key fails at once; the others take a while.
          if (Object.values(asked)[0]!.Keys.some((key) => key.pk === keys[0]!.pk)) throw new Error('connection reset');
          await new Promise((resolve) => setTimeout(resolve, 200));
          return await next(args);
        } finally {
          calls.now--;
        }
      },
      'failOneBatchRead',
      'initialize',
    );

    await expect(batchGetItems(testContext({ db }), keys, { consistent: true, what: 'test read' })).rejects.toThrow(
      'connection reset',
    );
    expect(calls.now).toBe(0);
  });

  it('asks again for the keys one of the calls left unprocessed, keeping what the others returned', async () => {
    const keys = await storedItems(250);
    let throttled = 0;
    const db = clientWith(
      (next, context) => async (args) => {
        // The first attempt of the second call comes back with nothing processed; every other call goes through.
        if (context.commandName === 'BatchGetItemCommand' && ++throttled === 2) return nothingProcessed(args) as never;
        return next(args);
      },
      'leaveOneBatchUnprocessed',
    );

    const found = await batchGetItems(testContext({ db }), keys, { consistent: true, what: 'test read' });

    expect(throttled).toBe(4);
    expect(found).toHaveLength(250);
    expect(new Set(found.map((item) => item.pk))).toEqual(new Set(keys.map((key) => key.pk)));
  });
});
