import { randomUUID } from 'node:crypto';
import { PutItemCommand, TransactionCanceledException, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { accountIdOf, accountKey, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { queuedBookingEntity } from '../../lib/store/entities/booking-queue.js';
import { localClient } from '../../infra/local/dynamodb.js';
import { ctx, testEndpoint } from '../support/context.js';
import { customersViaHttp } from '../support/customers.js';
import { listEvents } from '../support/events.js';
import { serviceWith } from '../support/faults.js';
import { fund, generalOf, markHot, queuedEntries, transferBody } from '../support/ledger.js';
import { achFunding } from '../support/payments.js';
import { setPrice } from '../support/pricing.js';
import { lostAnswer } from '../support/raw-response.js';
import { newPlatform, type Response, type TestPlatform, type TestService } from '../support/service.js';

/**
 * Group commit under faults: transfers, rewards and ACH-funded purchases of one platform at once (its
 * general USD account and its ACH clearing account both turn hot), through a DynamoDB client that cancels
 * transactions as conflicts, loses the answer of committed ones, and kills a committer between its read of
 * the queue and its commit. Clients retry with the same X-Request-Id until they get an answer.
 */

beforeAll(async () => {
  await setPrice('ETH', 'USD', '2000');
  await setPrice('LTC', 'USD', '100');
});

/** A small seeded generator, so a failure replays with the same fault decisions. */
function seeded(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function faultyService(seed: number) {
  const random = seeded(seed);
  const injected = { conflicts: 0, lostResponses: 0, crashes: 0 };
  let crashArmed = false;
  const committed = new Set<string>();
  const service = serviceWith(
    (next, context) => async (args) => {
      const input = ((args as unknown as { input?: Record<string, unknown> }).input ?? {}) as Record<string, unknown>;
      if (
        context.commandName === 'QueryCommand' &&
        // A read of a queue shard (`BOOKINGS#<account>#Q<n>`, marshalled or not): the committer's round.
        Object.values((input.ExpressionAttributeValues ?? {}) as Record<string, unknown>).some((value) =>
          /^BOOKINGS#.*#Q\d+$/.test(String((value as { S?: unknown } | undefined)?.S ?? value)),
        ) &&
        injected.crashes < 3 &&
        random() < 0.3
      ) {
        // The committer has read the queue; it dies before its commit.
        crashArmed = true;
        return next(args);
      }
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      // The SDK resending a request whose answer was lost: DynamoDB answers it from the token, never cancels it.
      const token = String(input.ClientRequestToken ?? '');
      if (token && committed.has(token)) return next(args);
      if (crashArmed) {
        crashArmed = false;
        injected.crashes += 1;
        throw Object.assign(new Error('the committer died between its read and its commit'), {
          name: 'CrashBeforeCommit',
        });
      }
      if (random() < 0.15) {
        injected.conflicts += 1;
        throw new TransactionCanceledException({
          message:
            'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
          $metadata: {},
          CancellationReasons: [{ Code: 'TransactionConflict' }],
        });
      }
      const result = await next(args);
      if (token) committed.add(token);
      if (random() < 0.1) {
        // Committed, but the answer never arrived: the SDK sends the very same request (same token) again.
        injected.lostResponses += 1;
        throw lostAnswer(result);
      }
      return result;
    },
    'injectHotAccountFaults',
  );
  return { service, injected };
}

interface Sent {
  kind: 'transfer' | 'reward' | 'ach';
  requestId: string;
  path: string;
  body: Record<string, unknown>;
  answer?: Response;
}

/** Retries (same id, same body) until an answer that is not a crash, a 503 or "still in progress". */
async function untilAnswered(platform: TestPlatform, sent: Sent, via: TestService): Promise<void> {
  for (let attempt = 0; attempt < 60; attempt++) {
    const response = await platform.post(sent.path, sent.body, { headers: { 'X-Request-Id': sent.requestId }, via });
    // A 409 that says the request is still running, or that another run of it got there first, asks for a retry.
    const retryable =
      response.status === 409 && /still in progress|retry to get its answer/.test(JSON.stringify(response.body));
    if (response.status < 500 && !retryable) {
      sent.answer = response;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
  }
  throw new Error(`${sent.kind} ${sent.requestId} never answered`);
}

async function history(platform: TestPlatform, account: AccountRef) {
  const events = (await listEvents(platform, `&type=account_balance.changed&resource_id=${accountIdOf(account)}`)).sort(
    (a, b) => a.sequence - b.sequence,
  );
  let balance = new Money(0);
  const movements: string[] = [];
  for (const [index, event] of events.entries()) {
    const data = event.data as { balance: string; movement: { change: string; movement_id: string } };
    expect(event.sequence).toBe(index + 1);
    balance = balance.plus(data.movement.change);
    expect(new Money(data.balance).toFixed()).toBe(balance.toFixed());
    movements.push(data.movement.movement_id);
  }
  return { balance, movements };
}

describe('a hot account under faults', () => {
  it('transfers, rewards and ACH executions at once, with conflicts, lost answers and a dying committer: each request books once, retries answer as the first, money is conserved', {
    timeout: 180_000,
  }, async () => {
    const platform = await newPlatform();
    const [customer] = await customersViaHttp(platform, 1);
    await fund(platform.participantCode, 'USD', '1000');
    await fund(platform.participantCode, 'USD', '1000', 'ach_clearing');
    const { service, injected } = faultyService(20261127);

    const general = generalOf(platform);
    const clearing: AccountRef = { ...general, account_label: 'ach_clearing' };
    const sent: Sent[] = [
      ...Array.from(
        { length: 40 },
        (_, i): Sent => ({
          kind: 'transfer',
          requestId: randomUUID(),
          path: '/transfers',
          body: {
            from_participant_code: platform.participantCode,
            to_participant_code: platform.participantCode,
            to_account_label: `payee-${i}`,
            asset: 'USD',
            amount: '1.00',
          },
        }),
      ),
      ...Array.from(
        { length: 20 },
        (): Sent => ({
          kind: 'reward',
          requestId: randomUUID(),
          path: '/rewards',
          body: { underlying: 'ETH', quoted_currency: 'USD', total: '2.00', participant_code: customer },
        }),
      ),
    ];
    // ACH purchases execute a quote each (asked for without faults).
    for (let i = 0; i < 12; i++) {
      const quote = await platform.get('/liquidity/rfq?underlying=LTC&quoted_currency=USD&side=buy&total=10');
      expect(quote.status, quote.text).toBe(200);
      sent.push({
        kind: 'ach',
        requestId: randomUUID(),
        path: '/liquidity/execute',
        body: { quote_id: quote.body.message.quote_id, funding_details: achFunding() },
      });
    }
    await Promise.all(sent.map((entry) => untilAnswered(platform, entry, service)));

    // Every request got its success: all are covered by the funding.
    for (const entry of sent)
      expect(entry.answer!.status, `${entry.kind}: ${entry.answer!.text}`).toBe(entry.kind === 'ach' ? 200 : 201);
    // Each retry, now without faults, is answered with the very first answer.
    for (const entry of sent) {
      const again = await platform.post(entry.path, entry.body, { headers: { 'X-Request-Id': entry.requestId } });
      expect(again.status).toBe(entry.answer!.status);
      expect(again.text).toBe(entry.answer!.text);
    }
    expect(injected.conflicts, JSON.stringify(injected)).toBeGreaterThan(0);
    expect(injected.lostResponses, JSON.stringify(injected)).toBeGreaterThan(0);
    expect(injected.crashes, JSON.stringify(injected)).toBeGreaterThan(0);

    // Each booked once: 40 transfers and 20 rewards out of general, 12 purchases out of ach_clearing, and
    // each account's events consecutive, each balance the previous plus its change.
    const transfers = await platform.get('/transfers?page_size=100');
    expect(transfers.body.count).toBe(40);
    const generalHistory = await history(platform, general);
    expect(generalHistory.movements).toHaveLength(1 + 40 + 20);
    expect(new Set(generalHistory.movements).size).toBe(61);
    const clearingHistory = await history(platform, clearing);
    expect(clearingHistory.movements).toHaveLength(1 + 12);
    const accounts = await platform.get('/accounts?page_size=100');
    const balanceOf = (label: string) =>
      accounts.body.message.find(
        (entry: any) =>
          entry.account_owner === platform.participantCode && entry.account_label === label && entry.asset === 'USD',
      )?.balance;
    expect(balanceOf('general')).toBe(generalHistory.balance.toFixed(2));
    expect(balanceOf('general')).toBe(new Money(1000).minus(40).minus(40).toFixed(2));
    expect(balanceOf('ach_clearing')).toBe(clearingHistory.balance.toFixed(2));
    for (let i = 0; i < 40; i++) expect(balanceOf(`payee-${i}`)).toBe('1.00');

    // The hot path ran: the general account's queue holds results.
    const results = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map((shard) =>
        ctx.db.send(
          new QueryCommand({
            TableName: ctx.tables.main,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
            ExpressionAttributeValues: {
              ':pk': queuedBookingEntity.partitionKey({ account_key: accountKey(general), shard }),
              ':r': 'R#',
            },
          }),
        ),
      ),
    );
    expect(results.reduce((sum, out) => sum + (out.Items?.length ?? 0), 0)).toBeGreaterThan(0);

    // The ledger check over the platform: balances, versions, movement entries, events and counters agree.
    const report = (await runAdmin(['ledger', 'check', '--platform', platform.platformCode], { ctx })) as {
      clean: boolean;
      discrepancies: unknown[];
    };
    expect(report.discrepancies).toEqual([]);
    expect(report.clean).toBe(true);
  });
});

describe('a queued booking whose use case books again', () => {
  for (const withRequestId of [false, true])
    it(`a transfer id drawn twice: the queued booking is refused, the transfer books once under a new id, its request claimed once (201, not 409)${withRequestId ? ', its X-Request-Id begun again' : ''}`, async () => {
      const platform = await newPlatform();
      await fund(platform.participantCode, 'USD', '10');
      const general = generalOf(platform);
      await markHot(general);
      // The first transaction writing a transfer record finds that record written just before it, as a request
      // drawing the same id in the same millisecond would have: the record's condition refuses the booking, and
      // the use case draws another id and books again.
      let squatted: string | undefined;
      let fromQueue = false;
      const raw = localClient(testEndpoint());
      const service = serviceWith(
        (next, context) => async (args) => {
          if (squatted === undefined && context.commandName === 'TransactWriteItemsCommand') {
            const items = ((args as unknown as { input: { TransactItems: TransactWriteItem[] } }).input.TransactItems ??
              []) as TransactWriteItem[];
            const record = items.find((item) => /^TRANSFER#/.test(String(item.Put?.Item?.pk?.S)))?.Put;
            if (record) {
              squatted = String(record.Item!.pk!.S);
              // A committer's round: the transaction also takes the booking off the account's queue.
              const pk = (item: TransactWriteItem) => (item.Delete?.Key ?? item.Update?.Key ?? item.Put?.Item)?.pk?.S;
              fromQueue = items.some((item) => /^BOOKINGS#/.test(String(pk(item))));
              await raw.send(new PutItemCommand({ TableName: record.TableName, Item: record.Item }));
            }
          }
          return next(args);
        },
        'squatTransferId',
      );

      const requestId = randomUUID();
      const body = transferBody(platform, { to_account_label: 'payee-0', amount: '1' });
      const headers: Record<string, string> = withRequestId ? { 'X-Request-Id': requestId } : {};
      const booked = await platform.post('/transfers', body, { via: service, headers });
      expect(booked.status, booked.text).toBe(201);
      expect(squatted).toBeDefined();
      expect(`TRANSFER#${booked.body.message.id}`).not.toBe(squatted);
      // The account was hot: the refused booking had queued (its claims made apart before it did).
      expect(fromQueue).toBe(true);
      expect(await queuedEntries(general)).toBe(0);
      expect((await platform.get(`/transfers/${booked.body.message.id}`)).status).toBe(200);
      const accounts = await platform.get('/accounts');
      const balance = (label: string) =>
        accounts.body.message.find((account: { account_label: string }) => account.account_label === label)?.balance;
      expect(balance('general')).toBe('9.00');
      expect(balance('payee-0')).toBe('1.00');
      if (withRequestId) {
        // The second booking completed the request's X-Request-Id record: a retry hears the same answer.
        const retried = await platform.post('/transfers', body, { headers });
        expect(retried.status).toBe(201);
        expect(retried.body).toEqual(booked.body);
      }
    });
});
