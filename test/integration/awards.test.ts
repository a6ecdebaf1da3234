import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { distributeAwards, resumeDistribution } from '../../lib/awards/distribute-awards.js';
import { ServiceUnavailableError } from '../../lib/domain/errors.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { ESCROW_LANES } from '../../lib/domain/awards.js';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { accountIdOf, SYSTEM_PARTICIPANTS } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { getDistribution } from '../../lib/store/awards.js';
import { chunkEntity } from '../../lib/store/entities/award.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { moneyAttr } from '../../lib/store/table/numbers.js';
import { customerAccount, customerBalances, escrowBalance, escrowLanes, pool } from '../support/awards.js';
import { customersInBulk, customersViaHttp, customersViaStore } from '../support/customers.js';
import { balances, balancesOf, fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx, testContext } from '../support/context.js';
import { serviceCrashingAfterCommit } from '../support/faults.js';
import { byProfile } from '../support/profile.js';

const DISTRIBUTE = '/awards/distribute';
const FUND = '/awards/fund';

// Prices are shared by every test file of the run; this file prices BTC/EUR only.
beforeAll(async () => {
  await setPrice('BTC', 'EUR', '40000');
});

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * A server whose process dies right after the distribution's `chunks`-th chunk committed: a distribution's
 * transactions are its record (with the pool's debit into escrow), then one per chunk, then its completion.
 */
const crashingAfterChunks = (chunks: number) => serviceCrashingAfterCommit({ skip: chunks, dead: true });

/** The injected crash is an internal error the service logs; keep it out of the test output. */
function quietCrashLogs() {
  vi.spyOn(ctx.logger, 'error').mockImplementation(() => undefined);
}

describe('POST /awards/fund', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
    await fund(platform.participantCode, 'EUR', '1000');
  });

  it('buys into the awards pool with `underlying` and with its alias `asset`: 201 each, then distributes from it', async () => {
    const byUnderlying = await platform.post(FUND, { underlying: 'BTC', quoted_currency: 'EUR', quantity: '0.01' });
    expect(byUnderlying.status, byUnderlying.text).toBe(201);
    expect(byUnderlying.body.message).toMatchObject({
      quote: {
        participant_code: platform.participantCode,
        underlying: 'BTC',
        quantity: '0.01000000',
        price: '40000',
        total_notional: '400.00',
        account_label: 'awards',
        obo_participant: null,
      },
      trade_id: expect.any(String),
      status: 'Completed',
    });
    const byAsset = await platform.post(FUND, { asset: 'BTC', quoted_currency: 'EUR', total: '200' });
    expect(byAsset.status, byAsset.text).toBe(201);
    expect(byAsset.body.message.quote).toMatchObject({ quantity: '0.00500000', total_notional: '200.00' });

    const after = await balances(platform);
    expect(after[`${platform.participantCode}/awards/BTC`]).toBe('0.01500000');
    expect(after[`${platform.participantCode}/general/EUR`]).toBe('400.00');

    const trade = await platform.get(`/trades/${byAsset.body.message.trade_id}`);
    expect(trade.body.message).toMatchObject({ symbol: 'BTC/EUR', trade_state: 'terminated' });
    expect(trade.body.message.parties[0]).toMatchObject({
      participant_code: platform.participantCode,
      account_label: 'awards',
      amount: '0.00500000',
    });

    const customers = await customersViaHttp(platform, 3);
    const distributed = await platform.post(DISTRIBUTE, {
      asset: 'BTC',
      quantity: '0.005',
      participant_codes: customers,
    });
    expect(distributed.status, distributed.text).toBe(201);
    expect((await balanceOf(ctx, pool(platform))).toFixed()).toBe('0');
  });

  it('with X-Request-Id, a repeat replays the first answer and buys once', async () => {
    const requestId = randomUUID();
    const first = await platform.post(
      FUND,
      { asset: 'BTC', quoted_currency: 'EUR', quantity: '0.001' },
      { headers: { 'X-Request-Id': requestId } },
    );
    expect(first.status).toBe(201);
    const before = await balances(platform);
    const again = await platform.post(
      FUND,
      { asset: 'BTC', quoted_currency: 'EUR', quantity: '0.001' },
      { headers: { 'X-Request-Id': requestId } },
    );
    expect(again.text).toBe(first.text);
    expect(await balances(platform)).toEqual(before);
  });

  it('refuses a missing underlying, two different ones, and both amounts, all at once', async () => {
    const missing = await platform.post(FUND, { quoted_currency: 'EUR', quantity: '0.001', total: '5' });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([
      'underlying: is required (or its alias asset)',
      'quantity: give exactly one of quantity or total, not both',
    ]);
    const conflicting = await platform.post(FUND, {
      underlying: 'BTC',
      asset: 'ETH',
      quoted_currency: 'EUR',
      quantity: '0.001',
    });
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.errors).toEqual(["underlying: 'BTC' differs from its alias asset 'ETH'; send one of them"]);
  });
});

describe('POST /awards/distribute', () => {
  let platform: TestPlatform;
  let customers: string[];
  beforeAll(async () => {
    platform = await newPlatform();
    customers = await customersViaHttp(platform, 25);
    await fund(platform.participantCode, 'BTC', '0.01', 'awards');
  });

  it('gives 0.0001 BTC to each of 25 customers: 201, 25 confirms, each credited once; a repeat replays', async () => {
    const requestId = randomUUID();
    const body = { asset: 'BTC', quantity: '0.0001', participant_codes: customers };
    const response = await platform.post(DISTRIBUTE, body, { headers: { 'X-Request-Id': requestId } });
    expect(response.status).toBe(201);
    expect(response.body.message.request_id).toBe(requestId);
    const confirms = response.body.message.confirms as { participant_code: string; trade_id: string }[];
    expect(confirms.map((confirm) => confirm.participant_code)).toEqual(customers);
    expect(new Set(confirms.map((confirm) => confirm.trade_id)).size).toBe(25);

    expect(await customerBalances(platform, customers)).toEqual(Array(25).fill('0.0001'));
    expect((await balanceOf(ctx, pool(platform))).toFixed()).toBe('0.0075');
    expect((await escrowBalance(platform)).toFixed()).toBe('0');

    // Each confirm's trade resolves, delivered (terminated/settled) to that customer.
    const trade = await platform.get(`/trades/${confirms[3]!.trade_id}`);
    expect(trade.status).toBe(200);
    expect(trade.body.message).toMatchObject({
      trade_state: 'terminated',
      settlement_state: 'settled',
      symbol: 'BTC/USD',
      trade_quantity: '0.00010000',
    });
    expect(trade.body.message.parties[0]).toMatchObject({
      side: 'buy',
      participant_code: customers[3],
      asset: 'BTC',
      amount: '0.00010000',
    });

    const again = await platform.post(DISTRIBUTE, body, { headers: { 'X-Request-Id': requestId } });
    expect(again.status).toBe(201);
    expect(again.text).toBe(response.text);
    expect(await customerBalances(platform, customers)).toEqual(Array(25).fill('0.0001'));
    expect((await balanceOf(ctx, pool(platform))).toFixed()).toBe('0.0075');
  });

  it('refuses more than the pool holds with 400 and moves nothing', async () => {
    const before = await customerBalances(platform, customers);
    const poolBefore = await balanceOf(ctx, pool(platform));
    const response = await platform.post(DISTRIBUTE, { asset: 'BTC', quantity: '0.001', participant_codes: customers });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      expect.stringMatching(/^quantity: the awards pool holds 0\.00750000 BTC, less than the 0\.02500000 needed/),
    ]);
    expect(await customerBalances(platform, customers)).toEqual(before);
    expect((await balanceOf(ctx, pool(platform))).eq(poolBefore)).toBe(true);
  });

  it('refuses a duplicated code, naming it, with 400 and moves nothing', async () => {
    const before = await customerBalances(platform, customers);
    const codes = [...customers.slice(0, 5), customers[2]!];
    const response = await platform.post(DISTRIBUTE, { asset: 'BTC', quantity: '0.0001', participant_codes: codes });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([`participant_codes: listed more than once: ${customers[2]}`]);
    expect(await customerBalances(platform, customers)).toEqual(before);
  });

  it('names every code that is not a customer of the platform (unknown, the platform itself, another platform)', async () => {
    const other = await newPlatform();
    const [foreign] = await customersViaStore(other.platformCode, 1);
    const codes = [customers[0]!, 'NOPE42', platform.participantCode, foreign!];
    const response = await platform.post(DISTRIBUTE, { asset: 'BTC', quantity: '0.0001', participant_codes: codes });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      `participant_codes: not customers of this platform: NOPE42, ${platform.participantCode}, ${foreign}`,
    ]);
  });

  it('reports every field problem at once', async () => {
    const response = await platform.post(DISTRIBUTE, { asset: 'BTC', quantity: '0.000000001', participant_codes: [] });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      'quantity: at most 8 decimal places for BTC',
      'participant_codes: name at least one customer',
    ]);
    const tooMany = await platform.post(DISTRIBUTE, {
      asset: 'BTC',
      quantity: '0.0001',
      participant_codes: Array.from({ length: 1001 }, (_, i) => `C${i}`),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors).toEqual(['participant_codes: at most 1000 customers per distribution, got 1001']);
    const unknownAsset = await platform.post(DISTRIBUTE, {
      asset: 'XYZ',
      quantity: '1',
      participant_codes: customers.slice(0, 1),
    });
    expect(unknownAsset.body.errors).toEqual(["asset: unknown asset 'XYZ'"]);
  });
});

describe('POST /awards/distribute across chunks', () => {
  // 15 recipients fit one transaction (see recipientsPerChunk), so 240 make sixteen chunks of 15: two per
  // escrow lane, so a crash leaves some chunk of every lane behind, whichever ran first.
  const RECIPIENTS = 240;
  const CHUNKS = 16;
  let platform: TestPlatform;
  let customers: string[];
  beforeAll(async () => {
    platform = await newPlatform();
    customers = await customersInBulk(platform.platformCode, RECIPIENTS);
    // Enough for every run of the property below at its largest (12 runs x 240 x 0.002 BTC), so a random
    // sequence of runs can never drain the pool and turn the property into an insufficient-funds 400.
    await fund(platform.participantCode, 'BTC', '10', 'awards');
  });

  for (const crashAfter of [1, 2]) {
    it(`completes on retry after a crash after ${crashAfter} chunk(s): each credited once, pool debited exactly quantity × N`, async () => {
      const requestId = randomUUID();
      const body = { asset: 'BTC', quantity: '0.00000123', participant_codes: customers };
      const poolBefore = await balanceOf(ctx, pool(platform));
      const before = await balancesOf(customers.map((code) => customerAccount(platform, code)));

      quietCrashLogs();
      const crashed = await platform.post(DISTRIBUTE, body, {
        headers: { 'X-Request-Id': requestId },
        via: crashingAfterChunks(crashAfter),
      });
      expect(crashed.status).toBe(500);

      // Part-way: the whole total sits in escrow or with the credited chunks' recipients, nobody twice. The
      // lanes ran at once, so other chunks than the first may be the credited ones, and more than `crashAfter`.
      const partial = await getDistribution(ctx, platform.platformCode, requestId);
      expect(partial?.distribution.status).toBe('distributing');
      // Neighbouring chunks pay from different escrow lanes: the lanes' transactions never share an item.
      expect(partial!.chunks.map((chunk) => accountIdOf(chunk.escrow))).toEqual(
        partial!.chunks.map((chunk) => accountIdOf(escrowLanes(platform)[chunk.index % ESCROW_LANES]!)),
      );
      const credited = partial!.chunks.filter((chunk) => chunk.status === 'credited');
      expect(credited.length).toBeGreaterThanOrEqual(crashAfter);
      expect(credited.length).toBeLessThan(CHUNKS);
      const total = new Money('0.00000123').mul(RECIPIENTS);
      expect(poolBefore.minus(await balanceOf(ctx, pool(platform))).toFixed()).toBe(total.toFixed());
      const midway = await balancesOf(customers.map((code) => customerAccount(platform, code)));
      const creditedCodes = new Set(
        credited.flatMap((chunk) => chunk.recipients.map((recipient) => recipient.participant_code)),
      );
      expect(midway.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(
        customers.map((code) => (creditedCodes.has(code) ? '0.00000123' : '0')),
      );
      expect((await escrowBalance(platform)).plus(new Money('0.00000123').mul(creditedCodes.size)).toFixed()).toBe(
        total.toFixed(),
      );

      const retried = await platform.post(DISTRIBUTE, body, { headers: { 'X-Request-Id': requestId } });
      expect(retried.status).toBe(201);
      const confirms = retried.body.message.confirms as { participant_code: string; trade_id: string }[];
      expect(confirms.map((confirm) => confirm.participant_code)).toEqual(customers);
      // The confirms name the trade ids fixed when the distribution was recorded, including the chunks credited before the crash.
      expect(confirms).toEqual(
        partial!.chunks.flatMap((chunk) => chunk.recipients).map((r) => ({ ...r, trade_ids_list: [r.trade_id] })),
      );

      const after = await balancesOf(customers.map((code) => customerAccount(platform, code)));
      expect(after.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(
        Array(RECIPIENTS).fill('0.00000123'),
      );
      expect(poolBefore.minus(await balanceOf(ctx, pool(platform))).toFixed()).toBe(
        new Money('0.00000123').mul(RECIPIENTS).toFixed(),
      );
      expect((await escrowBalance(platform)).toFixed()).toBe('0');
      expect((await getDistribution(ctx, platform.platformCode, requestId))?.distribution.status).toBe('completed');

      const trades = await Promise.all(confirms.map((confirm) => platform.get(`/trades/${confirm.trade_id}`)));
      expect(trades.every((trade) => trade.status === 200 && trade.body.message.trade_state === 'terminated')).toBe(
        true,
      );
    });
  }

  it('runs of one request racing past the middleware (its lease lapsed) credit everyone once and agree on the confirms', async () => {
    const auth = {
      platformCode: platform.platformCode,
      participantCode: platform.participantCode,
      apiKey: 'test',
      permissions: [],
    };
    const requestId = randomUUID();
    const poolBefore = await balanceOf(ctx, pool(platform));
    const before = await balancesOf(customers.map((code) => customerAccount(platform, code)));
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () =>
        distributeAwards(ctx, auth, { asset: 'BTC', quantity: '0.00000011', participant_codes: customers }, requestId),
      ),
    );
    const answered = results.flatMap((result) => (result.status === 'fulfilled' ? [JSON.stringify(result.value)] : []));
    // A run may give up with a 503 when the others keep it busy (and nothing else: a lost chunk race is not an
    // error, the chunk is paid); any that answers gives the same confirms.
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ServiceUnavailableError);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(new Set(answered).size).toBe(1);
    const final = await distributeAwards(
      ctx,
      auth,
      { asset: 'BTC', quantity: '0.00000011', participant_codes: customers },
      requestId,
    );
    expect(JSON.stringify(final)).toBe(answered[0]);

    const after = await balancesOf(customers.map((code) => customerAccount(platform, code)));
    expect(after.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(
      Array(RECIPIENTS).fill('0.00000011'),
    );
    expect(poolBefore.minus(await balanceOf(ctx, pool(platform))).toFixed()).toBe(
      new Money('0.00000011').mul(RECIPIENTS).toFixed(),
    );
  });

  /**
   * The chunk's `pending` -> `credited` raced: resumes of one crashed distribution run side by side (two
   * operators, or an operator and the client's retry), each crediting the chunks it read as pending. Planted
   * without the chunk's condition (lib/store/awards.ts `chunkCreditedItem`, its `:pending` value dropped with
   * it), the losers fail on the chunk's trades already stored (TradeIdTakenError, a 500, not a 503) and this
   * test fails.
   */
  it('resumes of one crashed distribution racing each other credit each recipient once; a loser may only answer 503', async () => {
    quietCrashLogs();
    const recipients = customers;
    const before = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    const poolBefore = await balanceOf(ctx, pool(platform));
    const escrowBefore = await escrowBalance(platform);
    const crashed = await platform.post(
      DISTRIBUTE,
      { asset: 'BTC', quantity: '0.00000013', participant_codes: recipients },
      { via: crashingAfterChunks(1) },
    );
    expect(crashed.status).toBe(500);
    const requestId = crashed.headers.get('x-request-id')!;
    const partial = await getDistribution(ctx, platform.platformCode, requestId);
    expect(partial!.chunks.some((chunk) => chunk.status === 'pending')).toBe(true);

    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => resumeDistribution(ctx, platform.platformCode, requestId)),
    );
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ServiceUnavailableError);
    const answered = results.flatMap((result) => (result.status === 'fulfilled' ? [JSON.stringify(result.value)] : []));
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(new Set(answered).size).toBe(1);

    const done = await getDistribution(ctx, platform.platformCode, requestId);
    expect(done!.distribution.status).toBe('completed');
    expect(done!.chunks.every((chunk) => chunk.status === 'credited')).toBe(true);
    const after = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    expect(after.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(
      Array(recipients.length).fill('0.00000013'),
    );
    expect(poolBefore.minus(await balanceOf(ctx, pool(platform))).toFixed()).toBe(
      new Money('0.00000013').mul(recipients.length).toFixed(),
    );
    expect((await escrowBalance(platform)).eq(escrowBefore)).toBe(true);
  });

  /**
   * A resume racing another one from a stale read (its chunks read as pending, then credited by the other
   * before it writes): it must answer what the other answers and pay nobody twice. The simulation's first run
   * of seed 101 (2,000 operations) saw such a racer answer 400 "insufficient BTC" from the escrow lane's guard
   * instead; `creditChunk` now takes a short lane with its chunk found credited as the lost race it is. This
   * interleaving reports the chunk's own marker first and passes without that change too: it pins down the
   * stale resume, not the exact interleaving the simulation hit (not reproduced deterministically).
   */
  it('a resume that read the chunks before another run credited them finishes quietly, paying nobody twice', async () => {
    quietCrashLogs();
    const recipients = customers.slice(0, 45);
    const before = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    const crashed = await platform.post(
      DISTRIBUTE,
      { asset: 'BTC', quantity: '0.00000017', participant_codes: recipients },
      { via: crashingAfterChunks(0) },
    );
    expect(crashed.status).toBe(500);
    const requestId = crashed.headers.get('x-request-id')!;
    expect(
      (await getDistribution(ctx, platform.platformCode, requestId))!.chunks.every((c) => c.status === 'pending'),
    ).toBe(true);

    // The slow run reads the distribution, then waits until the fast one has credited every chunk.
    let read!: () => void;
    const hasRead = new Promise<void>((resolve) => (read = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slowCtx = testContext({
      db: {
        send: async (command: any) => {
          const result = await ctx.db.send(command);
          if (command instanceof QueryCommand && JSON.stringify(command.input).includes(requestId)) {
            read();
            await released;
          }
          return result;
        },
      } as never,
    });
    const slow = resumeDistribution(slowCtx, platform.platformCode, requestId);
    await hasRead;
    const fast = await resumeDistribution(ctx, platform.platformCode, requestId);
    release();
    expect(JSON.stringify(await slow)).toBe(JSON.stringify(fast));

    const after = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    expect(after.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(
      Array(recipients.length).fill('0.00000017'),
    );
  });

  it('without X-Request-Id, a crashed distribution is found by `awards open` and finished by `awards resume`', async () => {
    quietCrashLogs();
    const recipients = customers.slice(0, 60);
    const before = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    const crashed = await platform.post(
      DISTRIBUTE,
      { asset: 'BTC', quantity: '0.00000007', participant_codes: recipients },
      { via: crashingAfterChunks(1) },
    );
    expect(crashed.status).toBe(500);
    // The id the service gave the request is on the error response too.
    const requestId = crashed.headers.get('x-request-id')!;

    const open = (await runAdmin(['awards', 'open'], { ctx })) as { platform_code: string; distribution_id: string }[];
    expect(open).toContainEqual(
      expect.objectContaining({ platform_code: platform.platformCode, distribution_id: requestId }),
    );
    const resumed = (await runAdmin(
      ['awards', 'resume', '--platform', platform.platformCode, '--request-id', requestId, '--reason', 'test'],
      { ctx },
    )) as {
      confirms: unknown[];
    };
    expect(resumed.confirms).toHaveLength(60);
    const after = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    expect(after.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(Array(60).fill('0.00000007'));
    const stillOpen = (await runAdmin(['awards', 'open'], { ctx })) as { distribution_id: string }[];
    expect(stillOpen.map((entry) => entry.distribution_id)).not.toContain(requestId);
  });

  it('finishes a distribution recorded before escrow lanes (its chunks name no lane) from its one escrow account', async () => {
    quietCrashLogs();
    const recipients = customers.slice(0, 50);
    const requestId = randomUUID();
    const body = { asset: 'BTC', quantity: '0.00000009', participant_codes: recipients };
    const before = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    // Recorded, no chunk credited (the process died before any chunk's transaction was sent).
    expect(
      (await platform.post(DISTRIBUTE, body, { headers: { 'X-Request-Id': requestId }, via: crashingAfterChunks(0) }))
        .status,
    ).toBe(500);
    const recorded = await getDistribution(ctx, platform.platformCode, requestId);
    expect(recorded!.chunks.every((chunk) => chunk.status === 'pending')).toBe(true);

    // As such a distribution stands: chunks without a lane, the whole total in the first lane's account.
    const update = (key: Record<string, string>, expression: string, values?: Record<string, unknown>) =>
      ctx.db.send(
        new UpdateCommand({
          TableName: ctx.tables.main,
          Key: key,
          UpdateExpression: expression,
          ...(values && { ExpressionAttributeValues: values }),
        }),
      );
    for (const chunk of recorded!.chunks)
      await update(
        chunkEntity.key({ platform_code: platform.platformCode, distribution_id: requestId, index: chunk.index }),
        'REMOVE escrow, item_version',
      );
    const [first, ...others] = escrowLanes(platform);
    // The first lane is the escrow account distributions used before lanes.
    expect(first).toEqual({
      participant_code: SYSTEM_PARTICIPANTS.escrow,
      account_group: platform.platformCode,
      account_label: 'awards',
      asset: 'BTC',
    });
    for (const lane of others) {
      const held = await balanceOf(ctx, lane);
      await update(accountEntity.key(lane), 'SET balance = balance - :held', { ':held': moneyAttr(held) });
      await update(accountEntity.key(first!), 'SET balance = balance + :held', { ':held': moneyAttr(held) });
    }
    expect(
      (await getDistribution(ctx, platform.platformCode, requestId))!.chunks.every(
        (chunk) => accountIdOf(chunk.escrow) === accountIdOf(first!),
      ),
    ).toBe(true);

    const finished = await platform.post(DISTRIBUTE, body, { headers: { 'X-Request-Id': requestId } });
    expect(finished.status, finished.text).toBe(201);
    const after = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
    expect(after.map((balance, i) => balance.minus(before[i]!).toFixed())).toEqual(Array(50).fill('0.00000009'));
    expect((await escrowBalance(platform)).toFixed()).toBe('0');
  });

  it('property: for any N, quantity and crash point, pool debit = sum of credits = quantity × N, exactly', async () => {
    quietCrashLogs();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: RECIPIENTS }),
        // Satoshis, so the quantity uses BTC's full precision.
        fc.bigInt({ min: 1n, max: 200_000n }),
        fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
        async (count, satoshis, crashAfter) => {
          const quantity = new Money(satoshis.toString()).div(100_000_000);
          const recipients = customers.slice(0, count);
          const requestId = randomUUID();
          const body = { asset: 'BTC', quantity: quantity.toFixed(), participant_codes: recipients };
          const poolBefore = await balanceOf(ctx, pool(platform));
          const escrowBefore = await escrowBalance(platform);
          const before = await balancesOf(recipients.map((code) => customerAccount(platform, code)));

          // Past a distribution's last chunk, the crash comes after its completion committed: the retry gets the answer.
          const via = crashAfter === undefined ? undefined : crashingAfterChunks(crashAfter);
          const first = await platform.post(DISTRIBUTE, body, {
            headers: { 'X-Request-Id': requestId },
            ...(via && { via }),
          });
          const final =
            first.status === 201
              ? first
              : await platform.post(DISTRIBUTE, body, { headers: { 'X-Request-Id': requestId } });
          expect(final.status).toBe(201);

          const after = await balancesOf(recipients.map((code) => customerAccount(platform, code)));
          const credits = after.map((balance, i) => balance.minus(before[i]!));
          const sumOfCredits = credits.reduce((sum, credit) => sum.plus(credit), new Money(0));
          const poolDebit = poolBefore.minus(await balanceOf(ctx, pool(platform)));
          expect(credits.every((credit) => credit.eq(quantity))).toBe(true);
          expect(poolDebit.toFixed()).toBe(sumOfCredits.toFixed());
          expect(poolDebit.toFixed()).toBe(quantity.mul(count).toFixed());
          expect((await escrowBalance(platform)).eq(escrowBefore)).toBe(true);
        },
      ),
      { numRuns: byProfile(4, 12) },
    );
  });
});

describe('POST /awards/distribute resumed on a hot account', () => {
  /**
   * Two resumes of one open distribution (the simulation's duplicate workers, seeds 303 and 404 at 10,000
   * operations) whose chunk pays a hot account: both queue the chunk's booking behind it, the committer's
   * first round credits one, and its next round finds the other's debit of the escrow lane uncovered (the
   * first took the lane's last part). Such a booking is refused for its funds with its own conditions probed;
   * the chunk's marker must be among them, ahead of its trades, so the loser hears that the chunk is credited
   * (and finishes quietly) rather than that a trade id is taken (an internal error, a 500).
   */
  it('resumes racing on a chunk whose recipient is hot: the loser finishes quietly, each recipient paid once', async () => {
    quietCrashLogs();
    // The lane holds only this distribution's part: the chunk credited empties it.
    const own = await newPlatform();
    const codes = await customersViaStore(own.platformCode, 3);
    await fund(own.participantCode, 'BTC', '0.001', 'awards');
    for (const code of codes) await fund(code, 'BTC', '0.00000001');
    const before = await customerBalances(own, codes);
    const crashed = await own.post(
      DISTRIBUTE,
      { asset: 'BTC', quantity: '0.00000019', participant_codes: codes },
      { via: crashingAfterChunks(0) },
    );
    expect(crashed.status).toBe(500);
    const requestId = crashed.headers.get('x-request-id')!;
    const recorded = await getDistribution(ctx, own.platformCode, requestId);
    expect(recorded!.chunks.map((chunk) => chunk.status)).toEqual(['pending']);
    // Contention elsewhere has made one recipient's account hot: its bookings queue for group commit.
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: accountEntity.key(customerAccount(own, codes[1]!)),
        UpdateExpression: 'SET hot_until_ms = :until',
        ExpressionAttributeValues: { ':until': ctx.clock.nowMs() + 10 * 60_000 },
      }),
    );

    const results = await Promise.allSettled([
      resumeDistribution(ctx, own.platformCode, requestId),
      resumeDistribution(ctx, own.platformCode, requestId),
    ]);
    // Nothing here waits past its bound, so neither needs a 503: both answer the completed distribution.
    expect(results.map((result) => (result.status === 'rejected' ? String(result.reason) : 'fulfilled'))).toEqual([
      'fulfilled',
      'fulfilled',
    ]);
    const answered = results.map((result) => JSON.stringify((result as PromiseFulfilledResult<unknown>).value));
    expect(answered[0]).toBe(answered[1]);

    const done = await getDistribution(ctx, own.platformCode, requestId);
    expect(done!.distribution.status).toBe('completed');
    const after = await customerBalances(own, codes);
    expect(after.map((balance, i) => new Money(balance).minus(before[i]!).toFixed())).toEqual(
      Array(3).fill('0.00000019'),
    );
    expect((await escrowBalance(own)).toFixed()).toBe('0');
  });
});
