import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../lib/http/signature.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { clientIdClaimEntity } from '../../lib/store/entities/window.js';
import { grantRelationship } from '../../lib/store/relationships.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { serviceCrashingAfterCommit, serviceWith } from '../support/faults.js';
import { balances, fund, transferBody } from '../support/ledger.js';
import { newPlatform, send, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

describe('POST /transfers', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '1000');
  });

  it('moves 250 of 1000 to another own label: 201 approved, balances 750/250', async () => {
    const response = await platform.post(
      '/transfers',
      transferBody(platform, { amount: '250', client_transfer_id: 'first' }),
    );
    expect(response.status).toBe(201);
    expect(response.body.message).toMatchObject({
      status: 'approved',
      amount: '250.00',
      asset: 'USD',
      client_transfer_id: 'first',
      from_account_label: 'general',
      to_account_label: 'savings',
      admin_transfer: false,
    });
    expect(typeof response.body.message.id).toBe('number');
    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/USD`]).toBe('750.00');
    expect(accounts[`${platform.participantCode}/savings/USD`]).toBe('250.00');

    const fetched = await platform.get(`/transfers/${response.body.message.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.message).toEqual(response.body.message);
  });

  it('refuses a reused client_transfer_id with 409 and moves nothing', async () => {
    const before = await balances(platform);
    const response = await platform.post(
      '/transfers',
      transferBody(platform, { amount: '5', client_transfer_id: 'first' }),
    );
    expect(response.status).toBe(409);
    expect(response.body.errors[0]).toContain('client_transfer_id');
    expect(await balances(platform)).toEqual(before);
  });

  it('answers a reused client_transfer_id 409 on a hot account too, where the debit is also uncovered', async () => {
    // The hot path refuses an uncovered debit before its transaction; the claim is probed in the round's
    // transaction so the duplicate is named, as the cold path names it (claims first). Seen by the simulation
    // (seed 101 at 10,000 operations): a reuse answered "insufficient balance".
    const own = await newPlatform();
    await fund(own.participantCode, 'USD', '10');
    const body = transferBody(own, { amount: '10', client_transfer_id: 'drained' });
    expect((await own.post('/transfers', body)).status).toBe(201);
    const source = {
      participant_code: own.participantCode,
      account_group: own.participantCode,
      account_label: 'general',
      asset: 'USD',
    };
    await ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: accountEntity.key(source),
        UpdateExpression: 'SET hot_until_ms = :until',
        ExpressionAttributeValues: { ':until': ctx.clock.nowMs() + 10 * 60_000 },
      }),
    );
    const reused = await own.post('/transfers', body);
    expect(reused.status).toBe(409);
    expect(reused.body.errors[0]).toContain('client_transfer_id: already used');
    // A fresh client id on the same hot account still hears about the funds.
    const uncovered = await own.post('/transfers', { ...body, client_transfer_id: 'fresh' });
    expect(uncovered.status).toBe(400);
    expect(uncovered.body.errors[0]).toContain('insufficient');
    const accounts = await balances(own);
    expect(accounts[`${own.participantCode}/general/USD`]).toBe('0.00');
    expect(accounts[`${own.participantCode}/savings/USD`]).toBe('10.00');
  });

  it('refuses more than the balance with 400 and moves nothing', async () => {
    const before = await balances(platform);
    const response = await platform.post('/transfers', transferBody(platform, { amount: '100000' }));
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toContain('insufficient');
    expect(await balances(platform)).toEqual(before);
  });

  it.each([['1.001'], ['0'], ['-5'], ['1e3'], ['abc'], [''], [12]])('refuses amount %j with 400', async (amount) => {
    const response = await platform.post('/transfers', transferBody(platform, { amount }));
    expect(response.status).toBe(400);
    expect(response.body.errors.join(' ')).toContain('amount');
  });

  it('refuses the same source and destination, an unknown asset and a malformed group, all at once', async () => {
    const same = await platform.post('/transfers', transferBody(platform, { to_account_label: 'general' }));
    expect(same.status).toBe(400);
    const several = await platform.post(
      '/transfers',
      transferBody(platform, { asset: 'XYZ', to_account_group: 'other group!', amount: 'x' }),
    );
    expect(several.status).toBe(400);
    expect(several.body.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^asset: /),
        'to_account_group: must be 1 to 50 letters, digits, _ or - (an account group)',
      ]),
    );
  });

  it('reports every missing field', async () => {
    const response = await platform.post('/transfers', {});
    expect(response.status).toBe(400);
    for (const field of ['from_participant_code', 'to_participant_code', 'asset', 'amount']) {
      expect(response.body.errors.join('\n')).toContain(field);
    }
  });

  it('answers malformed JSON with 400 errors', async () => {
    const response = await platform.request('POST', '/transfers', undefined, { rawBody: '{"amount": ' });
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatch(/^body: malformed JSON/);
  });

  it.each([['[]'], ['"text"'], ['null'], ['42']])(
    'answers a JSON body that is not an object (%s) with 400',
    async (rawBody) => {
      const response = await platform.request('POST', '/transfers', undefined, { rawBody });
      expect(response.status).toBe(400);
      expect(response.body.errors.length).toBeGreaterThan(0);
    },
  );

  it('does nothing again for the same signed POST sent twice: 409 request already received', async () => {
    const body = JSON.stringify(transferBody(platform, { amount: '1' }));
    const timestamp = ctx.clock.nowSeconds();
    const first = await send('POST', '/transfers', undefined, {
      credentials: platform.credentials,
      rawBody: body,
      timestamp,
    });
    expect(first.status).toBe(201);
    const before = await balances(platform);
    const replay = await send('POST', '/transfers', undefined, {
      credentials: platform.credentials,
      rawBody: body,
      timestamp,
    });
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual({ errors: [expect.stringMatching(/^request already received: /)] });
    expect(await balances(platform)).toEqual(before);
  });

  it('refuses a replay whose signature is spelled differently but decodes to the same bytes', async () => {
    const other = await newPlatform();
    await fund(other.participantCode, 'USD', '10');
    const body = JSON.stringify(transferBody(other, { amount: '1' }));
    const timestamp = ctx.clock.nowSeconds();
    const signature = sign(
      Buffer.from(other.credentials.api_secret, 'base64'),
      String(timestamp),
      'POST',
      '/transfers',
      body,
    );
    const signed = (spelling: string) => ({
      'X-SVC-API-KEY': other.credentials.api_key,
      'X-SVC-PASSPHRASE': other.credentials.passphrase,
      'X-SVC-TIMESTAMP': String(timestamp),
      'X-SVC-SIGNED': spelling,
    });
    expect(
      (await send('POST', '/transfers', undefined, { rawBody: body, unsigned: true, headers: signed(signature) }))
        .status,
    ).toBe(201);
    // Base64 decoding is lenient: without padding, with extra padding, or with URL-safe letters, it is one signature.
    const respellings = [
      signature.replace(/=+$/, ''),
      `${signature}=`,
      signature.replace(/\+/g, '-').replace(/\//g, '_'),
    ].filter((s) => s !== signature);
    expect(respellings.length).toBeGreaterThanOrEqual(2);
    for (const spelling of respellings) {
      // Without its padding it is the same signature (a repeat: 409); any other spelling isn't one base64 value (403).
      const replay = await send('POST', '/transfers', undefined, {
        rawBody: body,
        unsigned: true,
        headers: signed(spelling),
      });
      expect(replay.status, spelling).toBe(spelling === signature.replace(/=+$/, '') ? 409 : 403);
    }
    expect((await balances(other))[`${other.participantCode}/general/USD`]).toBe('9.00');
  });

  it('refuses an amount DynamoDB could not hold with 400 and moves nothing', async () => {
    const before = await balances(platform);
    for (const [asset, amount] of [
      ['USD', '1000000000000000'],
      ['ETH', '12345678901234567890123.123456789012345678'],
      ['USD', `1${'0'.repeat(130)}`],
    ]) {
      const response = await platform.post('/transfers', transferBody(platform, { asset, amount }));
      expect(response.status, `${asset} ${amount}: ${response.text}`).toBe(400);
      expect(response.body.errors.join(' ')).toContain('amount');
    }
    expect(await balances(platform)).toEqual(before);
  });
});

describe('transfers across platforms', () => {
  it('hides another platform’s transfers and refuses to move its money unless related', async () => {
    const owner = await newPlatform();
    const stranger = await newPlatform();
    await fund(owner.participantCode, 'USD', '100');
    const created = await owner.post('/transfers', transferBody(owner, { amount: '10' }));
    expect(created.status).toBe(201);

    expect((await stranger.get(`/transfers/${created.body.message.id}`)).status).toBe(404);
    expect((await stranger.get('/transfers/not-a-number')).status).toBe(404);
    const listed = await stranger.get('/transfers');
    expect(listed.body.message).toEqual([]);

    const raid = await stranger.post('/transfers', {
      ...transferBody(owner, { amount: '10' }),
      to_participant_code: stranger.participantCode,
      to_account_group: stranger.platformCode,
    });
    expect(raid.status).toBe(400);
    expect(raid.body.errors.join(' ')).toContain('from_participant_code');
    // Nor may it push its own money into the other platform's accounts.
    await fund(stranger.participantCode, 'USD', '10');
    const push = await stranger.post('/transfers', {
      ...transferBody(stranger, { amount: '1' }),
      to_participant_code: owner.participantCode,
      to_account_group: owner.platformCode,
    });
    expect(push.status).toBe(400);
    expect(push.body.errors.join(' ')).toContain('to_participant_code');
    const ownerBalances = await balances(owner);
    expect(ownerBalances[`${owner.participantCode}/general/USD`]).toBe('90.00');
    expect(ownerBalances[`${owner.participantCode}/savings/USD`]).toBe('10.00');

    // With the relationship granted by ops, the same transfer goes through.
    await grantRelationship(ctx, stranger.platformCode, 'submits_platform_transfers_for', owner.participantCode);
    const permitted = await stranger.post('/transfers', {
      ...transferBody(owner, { amount: '10' }),
      to_participant_code: stranger.participantCode,
      to_account_group: stranger.platformCode,
    });
    expect(permitted.status).toBe(201);
    expect((await balances(stranger))[`${stranger.participantCode}/savings/USD`]).toBe('10.00');
  });
});

describe('concurrency', () => {
  it('40 concurrent 1-unit transfers out of 10: exactly 10 succeed, no 5xx, balance 0', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '10');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        platform.post('/transfers', transferBody(platform, { amount: '1', client_transfer_id: `c-${i}` })),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 400)).toBe(true);
    const accounts = await balances(platform);
    expect(accounts[`${platform.participantCode}/general/USD`]).toBe('0.00');
    expect(accounts[`${platform.participantCode}/savings/USD`]).toBe('10.00');
  });

  it('20 concurrent sends of one client_transfer_id book exactly one', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        platform.post('/transfers', transferBody(platform, { amount: '1', client_transfer_id: 'same-id' })),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 409)).toBe(true);
    const listed = await platform.get('/transfers?client_transfer_id=same-id');
    expect(listed.body.count).toBe(1);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('99.00');
  });
});

describe('the 72-hour client_transfer_id window', () => {
  it('ends at the stored expiry, not when DynamoDB deletes the item', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const clientId = `window-${randomUUID()}`;
    expect((await platform.post('/transfers', transferBody(platform, { client_transfer_id: clientId }))).status).toBe(
      201,
    );
    const HOURS_72 = 72 * 3600 * 1000;
    // The test clock is real time plus an offset, so the margins leave room for a slow machine between requests.
    try {
      ctx.clock.advance(HOURS_72 - 60_000);
      expect((await platform.post('/transfers', transferBody(platform, { client_transfer_id: clientId }))).status).toBe(
        409,
      );
      ctx.clock.advance(120_000);
      // The expired claim is still in the table: only its stored expiry ends the window.
      const stored = await ctx.db.send(
        new GetCommand({
          TableName: ctx.tables.ttl,
          Key: clientIdClaimEntity.key({ kind: 'transfer', platform_code: platform.platformCode, client_id: clientId }),
        }),
      );
      expect(stored.Item).toBeDefined();
      expect((await platform.post('/transfers', transferBody(platform, { client_transfer_id: clientId }))).status).toBe(
        201,
      );
    } finally {
      ctx.clock.reset();
    }
  });
});

describe('GET /transfers and GET /accounts', () => {
  it('filters and paginates', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    await fund(platform.participantCode, 'BTC', '1');
    for (let i = 0; i < 5; i++) {
      expect(
        (await platform.post('/transfers', transferBody(platform, { amount: '1', client_transfer_id: `p-${i}` })))
          .status,
      ).toBe(201);
    }
    expect(
      (
        await platform.post(
          '/transfers',
          transferBody(platform, { asset: 'BTC', amount: '0.00000001', to_account_label: 'cold' }),
        )
      ).status,
    ).toBe(201);

    const page1 = await platform.get('/transfers?page=1&page_size=2&asset=USD');
    expect(page1.body).toMatchObject({ page: 1, page_size: 2, total_pages: 3, count: 5 });
    expect(page1.body.message).toHaveLength(2);
    const page3 = await platform.get('/transfers?page=3&page_size=2&asset=USD');
    expect(page3.body.message).toHaveLength(1);
    expect((await platform.get('/transfers?to_account_label=cold')).body.message).toEqual([
      expect.objectContaining({ asset: 'BTC', amount: '0.00000001' }),
    ]);
    expect((await platform.get('/transfers?page_size=101')).status).toBe(400);
    expect((await platform.get('/transfers?page=0')).status).toBe(400);

    const btc = await platform.get('/accounts?asset=BTC');
    expect(btc.body.message).toEqual([
      expect.objectContaining({
        asset: 'BTC',
        account_label: 'cold',
        balance: '0.00000001',
        account_type: 'available',
      }),
      expect.objectContaining({
        asset: 'BTC',
        account_label: 'general',
        balance: '0.99999999',
        account_owner: platform.participantCode,
      }),
    ]);
    const labelled = await platform.get('/accounts?account_label=savings');
    expect(labelled.body.message).toEqual([
      expect.objectContaining({ balance: '5.00', account_group: platform.platformCode }),
    ]);
    expect(labelled.body.message[0].account_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('X-Request-Id idempotency on POST', () => {
  it('returns the first response for the same id and body, 422 for a different body', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const requestId = randomUUID();
    const body = transferBody(platform, { amount: '3' });
    const first = await platform.post('/transfers', body, { headers: { 'X-Request-Id': requestId } });
    expect(first.status).toBe(201);
    const again = await platform.post('/transfers', body, { headers: { 'X-Request-Id': requestId } });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('x-request-id')).toBe(requestId);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('97.00');
    const changed = await platform.post(
      '/transfers',
      { ...body, amount: '4' },
      { headers: { 'X-Request-Id': requestId } },
    );
    expect(changed.status).toBe(422);
    expect(changed.body.errors[0]).toContain('X-Request-Id');
    expect((await platform.post('/transfers', body, { headers: { 'X-Request-Id': 'not-a-uuid' } })).status).toBe(400);
  });
});

describe('a transfer whose first run booked but never answered', () => {
  // What a run that died between its commit and its answer leaves behind: the booking, with its answer
  // stored in the same transaction (the request's claim). The crashing run is a server of its own.

  it('answers the retry with the booked transfer instead of booking a second one', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const requestId = randomUUID();
    const body = transferBody(platform, { amount: '7' });
    const via = serviceCrashingAfterCommit();
    const first = await platform.post('/transfers', body, { headers: { 'X-Request-Id': requestId }, via });
    expect(first.status).toBe(500);

    const retry = await platform.post('/transfers', body, { headers: { 'X-Request-Id': requestId } });
    expect(retry.status).toBe(201);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('93.00');
    const listed = await platform.get('/transfers');
    expect(listed.body.count).toBe(1);
    expect(retry.body.message).toEqual(listed.body.message[0]);
  });

  it('refuses another request under the same id with 422 and moves nothing', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const requestId = randomUUID();
    const via = serviceCrashingAfterCommit();
    expect(
      (
        await platform.post('/transfers', transferBody(platform, { amount: '7' }), {
          headers: { 'X-Request-Id': requestId },
          via,
        })
      ).status,
    ).toBe(500);

    const other = await platform.post('/transfers', transferBody(platform, { amount: '8' }), {
      headers: { 'X-Request-Id': requestId },
    });
    expect(other.status).toBe(422);
    expect((await balances(platform))[`${platform.participantCode}/general/USD`]).toBe('93.00');
  });
});

describe('reads a booking makes', () => {
  it('reads both accounts of a transfer, for their balance events, in one consistent BatchGetItem', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
    const accountReads: { command: string; keys: string[]; consistent: boolean }[] = [];
    const via = serviceWith(
      (next, context) => async (args) => {
        const input = args.input as {
          Key?: { pk: string };
          RequestItems?: Record<string, { Keys: { pk: string }[]; ConsistentRead?: boolean }>;
          ConsistentRead?: boolean;
        };
        const keys = input.Key
          ? [input.Key.pk]
          : Object.values(input.RequestItems ?? {}).flatMap((request) => request.Keys.map((key) => key.pk));
        const consistent =
          input.ConsistentRead ??
          Object.values(input.RequestItems ?? {}).every((request) => request.ConsistentRead === true);
        if (keys.some((key) => String(key).startsWith('ACCOUNT#')))
          accountReads.push({ command: String(context.commandName), keys, consistent });
        return next(args);
      },
      'accountReads',
      'initialize',
    );
    const moved = await platform.post('/transfers', transferBody(platform, { amount: '7' }), { via });
    expect(moved.status).toBe(201);
    expect(accountReads).toHaveLength(1);
    expect(accountReads[0]).toMatchObject({ command: 'BatchGetItemCommand', consistent: true });
    expect(new Set(accountReads[0]!.keys).size).toBe(2);
  });
});

describe('ops CLI', () => {
  it('deposits and grants relationships', async () => {
    const platform = await newPlatform();
    const result: any = await runAdmin(
      [
        'deposit',
        '--participant',
        platform.participantCode,
        '--asset',
        'ETH',
        '--amount',
        '1.000000000000000001',
        '--reference',
        `wire-${randomUUID()}`,
        '--reason',
        'test',
      ],
      { ctx },
    );
    expect(result.movement_id).toBeTruthy();
    expect((await balances(platform))[`${platform.participantCode}/general/ETH`]).toBe('1.000000000000000001');
    await expect(
      runAdmin(
        [
          'deposit',
          '--participant',
          platform.participantCode,
          '--asset',
          'USD',
          '--amount',
          '1.001',
          '--reference',
          `wire-${randomUUID()}`,
          '--reason',
          'test',
        ],
        { ctx },
      ),
    ).rejects.toThrow(/decimal places/);
  });
});
