import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionArea } from '../../lib/domain/caller.js';
import { sign } from '../../lib/http/signature.js';
import { createApiKey } from '../../lib/store/api-keys.js';
import { auditLog } from '../../lib/store/audit.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { UsageError } from '../../infra/ops/command.js';
import { customerBody, customersViaHttp } from '../support/customers.js';
import { balances, fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { baseUrl, newPlatform, send, type Response, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

const admin = (...argv: string[]) => runAdmin(argv, { ctx });
const ETH_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

/** Another key of `platform`'s, holding only `permissions`, with a signed client like the platform's. */
async function keyOf(platform: TestPlatform, permissions: readonly PermissionArea[]) {
  const credentials = await createApiKey(ctx, platform.platformCode, permissions);
  const usedSignatures = new Set<string>();
  const request = (method: string, path: string, body?: unknown) =>
    send(method, path, body, { credentials, usedSignatures });
  return {
    get: (path: string) => request('GET', path),
    post: (path: string, body?: unknown) => request('POST', path, body ?? {}),
    patch: (path: string, body: unknown) => request('PATCH', path, body),
  };
}

/** A request signed over `signedTarget` and sent to `sentTarget`, with the given headers on top. */
async function signedAs(
  platform: TestPlatform,
  method: string,
  signedTarget: string,
  sentTarget: string,
  options: { timestamp?: number; headers?: Record<string, string> } = {},
): Promise<Response> {
  const timestamp = String(options.timestamp ?? ctx.clock.nowSeconds());
  const secret = Buffer.from(platform.credentials.api_secret, 'base64');
  return send(method, sentTarget, undefined, {
    unsigned: true,
    headers: {
      'X-SVC-API-KEY': platform.credentials.api_key,
      'X-SVC-PASSPHRASE': platform.credentials.passphrase,
      'X-SVC-TIMESTAMP': timestamp,
      'X-SVC-SIGNED': sign(secret, timestamp, method, signedTarget, '{}'),
      ...options.headers,
    },
  });
}

/** The quotes stored for a platform (read from the table: no route lists them). */
/**
 * The items the service's client puts while this file runs (a PutItem, or a transaction's Put), noted by a
 * middleware on the shared test client that is removed when the file is done. Looking for what a request wrote
 * so costs nothing, where a Scan read the whole shared table (15 s a test late in the suite).
 */
const putItems: LowLevelItem[] = [];
const PUT_RECORDER = 'securityTestPutRecorder';
type LowLevelItem = Record<string, { S?: string }>;
type WriteInput = { Item?: LowLevelItem; TransactItems?: { Put?: { Item?: LowLevelItem } }[] };

beforeAll(() => {
  ctx.db.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = args.input as WriteInput;
      if (context.commandName === 'PutItemCommand' && input.Item) putItems.push(input.Item);
      if (context.commandName === 'TransactWriteItemsCommand')
        for (const action of input.TransactItems ?? []) if (action.Put?.Item) putItems.push(action.Put.Item);
      return result;
    },
    // After marshalling: the input is DynamoDB's own shape whichever client sent it.
    { step: 'build', name: PUT_RECORDER, override: true },
  );
});
afterAll(() => {
  ctx.db.middlewareStack.remove(PUT_RECORDER);
});

function quotesOf(platformCode: string): string[] {
  return putItems
    .filter((item) => item.pk?.S?.startsWith('QUOTE#') && item.platform_code?.S === platformCode)
    .map((item) => item.quote_id?.S ?? '')
    .sort();
}

beforeAll(async () => {
  // The same prices and fee reference-responses.test.ts sets (shared by the run's files).
  await setPrice('DOGE', 'USD', '0.25');
  await setPrice('USDC', 'EUR', '0.9');
  await admin('fee', 'set', '--asset', 'USDC', '--quantity', '1.5', '--reason', 'test');
});

describe('events follow the key areas of their types', () => {
  let platform: TestPlatform;
  let webhooksOnly: Awaited<ReturnType<typeof keyOf>>;
  let balanceEventId: string;
  let testEventId: string;
  let fullEndpointId: string;

  beforeAll(async () => {
    platform = await newPlatform();
    webhooksOnly = await keyOf(platform, ['webhooks']);
    await fund(platform.participantCode, 'USD', '100');
    const endpoint = await platform.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/all' });
    expect(endpoint.status, endpoint.text).toBe(200);
    fullEndpointId = endpoint.body.message.id;
    const test = await platform.post(`/webhooks/endpoints/${fullEndpointId}/test`, {});
    expect(test.status, test.text).toBe(200);
    testEventId = test.body.message.id;
    const balances = await platform.get('/events?type=account_balance.changed');
    expect(balances.body.message.length).toBeGreaterThan(0);
    balanceEventId = balances.body.message[0].id;
  });

  it('GET /events of a type the key cannot see is a 403 naming the area; a list of every type leaves them out', async () => {
    for (const [type, area] of [
      ['account_balance.changed', 'accounts'],
      ['trade.status_changed', 'trades'],
      ['participant.status_changed', 'participants'],
      ['payment.status_changed', 'payments'],
      ['withdrawal.status_changed', 'withdrawals'],
      ['award_distribution.completed', 'awards'],
    ]) {
      const refused = await webhooksOnly.get(`/events?type=${type}`);
      expect(refused.status, type).toBe(403);
      expect(refused.body).toEqual({ error: true, message: expect.stringContaining(`'${area}'`) });
    }
    const all = await webhooksOnly.get('/events');
    expect(all.status, all.text).toBe(200);
    expect(all.body.message.map((event: any) => event.type)).toEqual(['webhook.test']);
    expect(all.body.count).toBe(1);
    expect(all.text).not.toContain('balance');
    // The full key sees both kinds.
    const full = await platform.get('/events');
    expect(new Set(full.body.message.map((event: any) => event.type))).toEqual(
      new Set(['account_balance.changed', 'webhook.test']),
    );
    // A key with `accounts` sees the balances, and still not what it lacks.
    const books = await keyOf(platform, ['webhooks', 'accounts']);
    const seen = await books.get('/events');
    expect(new Set(seen.body.message.map((event: any) => event.type))).toEqual(
      new Set(['account_balance.changed', 'webhook.test']),
    );
    expect((await books.get('/events?type=trade.status_changed')).status).toBe(403);
  });

  it('GET /events/{id} and POST /events/{id}/redeliver of an event the key cannot see: 403, nothing asked', async () => {
    const read = await webhooksOnly.get(`/events/${balanceEventId}`);
    expect(read.status).toBe(403);
    expect(read.body.message).toContain("'accounts'");
    const redeliver = await webhooksOnly.post(`/events/${balanceEventId}/redeliver`);
    expect(redeliver.status).toBe(403);
    expect(
      putItems.filter((item) => item.event_id?.S === balanceEventId && item.type?.S === 'event_redelivery'),
    ).toEqual([]);
    // Its own kind it reads and redelivers; the full key reads the other.
    expect((await webhooksOnly.get(`/events/${testEventId}`)).status).toBe(200);
    expect((await webhooksOnly.post(`/events/${testEventId}/redeliver`)).status).toBe(200);
    // The recorder sees a redelivery the key may ask for, so the empty list above is not for want of seeing.
    expect(putItems.some((item) => item.event_id?.S === testEventId && item.type?.S === 'event_redelivery')).toBe(true);
    expect((await platform.get(`/events/${balanceEventId}`)).status).toBe(200);
  });

  it('an endpoint subscribes only to types its key sees; without event_types only a key seeing every type', async () => {
    const before = (await platform.get('/webhooks/endpoints')).body.count;
    const typed = await webhooksOnly.post('/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/x',
      event_types: ['webhook.test', 'account_balance.changed'],
    });
    expect(typed.status).toBe(403);
    expect(typed.body.message).toContain("'accounts'");
    expect(typed.body.message).toContain('account_balance.changed');
    const everything = await webhooksOnly.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/x' });
    expect(everything.status).toBe(403);
    expect(everything.body.message).toContain('event_types');
    expect((await platform.get('/webhooks/endpoints')).body.count).toBe(before);

    // Re-pointing the full key's endpoint (every type) or widening one is refused; housekeeping is not.
    const repoint = await webhooksOnly.patch(`/webhooks/endpoints/${fullEndpointId}`, { url: 'http://127.0.0.1:9/me' });
    expect(repoint.status).toBe(403);
    expect((await platform.get(`/webhooks/endpoints/${fullEndpointId}`)).body.message.url).toBe(
      'http://127.0.0.1:9/all',
    );
    const own = await webhooksOnly.post('/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/mine',
      event_types: ['webhook.test'],
    });
    expect(own.status, own.text).toBe(200);
    const widen = await webhooksOnly.patch(`/webhooks/endpoints/${own.body.message.id}`, { event_types: null });
    expect(widen.status).toBe(403);
    const described = await webhooksOnly.patch(`/webhooks/endpoints/${fullEndpointId}`, { description: 'ops' });
    expect(described.status, described.text).toBe(200);
    expect(described.body.message.event_types).toBeNull();
  });
});

describe('a GET that creates a quote is claimed like a POST', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  it('the same headers signed over the bare path make one quote, whatever query comes with them', async () => {
    const timestamp = ctx.clock.nowSeconds();
    const first = await signedAs(
      platform,
      'GET',
      '/liquidity/rfq',
      '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=10',
      { timestamp },
    );
    expect(first.status, first.text).toBe(200);
    const second = await signedAs(
      platform,
      'GET',
      '/liquidity/rfq',
      '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&total=50',
      { timestamp },
    );
    expect(second.status, second.text).toBe(409);
    expect(second.body.errors[0]).toContain('request already received');
    const same = await signedAs(
      platform,
      'GET',
      '/liquidity/rfq',
      '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=10',
      { timestamp },
    );
    expect(same.status).toBe(409);
    expect(quotesOf(platform.platformCode)).toEqual([first.body.message.quote_id]);
  });

  it('ten sends of one bare-path signature at once, each with another total: one quote, the rest 409', async () => {
    const quoter = await newPlatform();
    const timestamp = ctx.clock.nowSeconds();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        signedAs(
          quoter,
          'GET',
          '/liquidity/rfq',
          `/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&total=${10 + i}`,
          { timestamp },
        ),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 409)).toBe(true);
    const made = answers.find((answer) => answer.status === 200)!;
    expect(quotesOf(quoter.platformCode)).toEqual([made.body.message.quote_id]);
  });

  it('a repeat with the first X-Request-Id gets the first quote; another query under that id is a 422', async () => {
    const quoter = await newPlatform();
    const requestId = randomUUID();
    const timestamp = ctx.clock.nowSeconds();
    const target = '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=20';
    const headers = { 'X-Request-Id': requestId };
    const first = await signedAs(quoter, 'GET', target, target, { timestamp, headers });
    expect(first.status, first.text).toBe(200);
    const retry = await signedAs(quoter, 'GET', target, target, { timestamp, headers });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.text).toBe(first.text);
    // Signed anew (another second) with another query under the same id: not the same request.
    const other = '/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=30';
    const mismatch = await signedAs(quoter, 'GET', other, other, { timestamp: timestamp - 1, headers });
    expect(mismatch.status, mismatch.text).toBe(422);
    expect(quotesOf(quoter.platformCode)).toEqual([first.body.message.quote_id]);
  });

  it('GET /convert_withdraw/rfq: the same headers with another withdrawal_address make nothing', async () => {
    const quoter = await newPlatform();
    const timestamp = ctx.clock.nowSeconds();
    const query = 'side=buy&underlying=USDC&quoted_currency=EUR&quantity=5';
    const first = await signedAs(
      quoter,
      'GET',
      '/convert_withdraw/rfq',
      `/convert_withdraw/rfq?${query}&withdrawal_address=${ETH_ADDRESS}`,
      { timestamp },
    );
    expect(first.status, first.text).toBe(200);
    const redirected = await signedAs(
      quoter,
      'GET',
      '/convert_withdraw/rfq',
      `/convert_withdraw/rfq?${query}&withdrawal_address=0x000000000000000000000000000000000000dEaD`,
      { timestamp },
    );
    expect(redirected.status).toBe(409);
    expect(quotesOf(quoter.platformCode)).toEqual([first.body.message.quote_id]);
  });
});

describe('account labels follow the rules of account groups', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100');
  });

  it('refuses a label with a key separator, spaces, controls, dots or slashes, or over 50 characters: 400 naming it, nothing booked', async () => {
    const before = await balances(platform);
    for (const label of [
      'general#x',
      'general ',
      ' general',
      'general\u0000',
      '../general',
      'a.b',
      'x'.repeat(51),
      '',
    ]) {
      const to = await platform.post('/transfers', {
        from_participant_code: platform.participantCode,
        to_participant_code: platform.participantCode,
        to_account_label: label,
        asset: 'USD',
        amount: '1',
      });
      expect(to.status, JSON.stringify(label)).toBe(400);
      expect(to.body.errors, JSON.stringify(label)).toEqual([
        'to_account_label: must be 1 to 50 letters, digits, _ or - (an account label)',
      ]);
      const from = await platform.post('/transfers', {
        from_participant_code: platform.participantCode,
        from_account_label: label,
        to_participant_code: platform.participantCode,
        to_account_label: 'savings',
        asset: 'USD',
        amount: '1',
      });
      expect(from.status).toBe(400);
      expect(from.body.errors[0]).toMatch(/^from_account_label: /);
    }
    expect(await balances(platform)).toEqual(before);
  });

  it('the quote, reward and list routes refuse such a label too', async () => {
    const encoded = encodeURIComponent('general#x');
    for (const path of [
      `/accounts?account_label=${encoded}`,
      `/transfers?from_account_label=${encoded}`,
      `/transfers?to_account_label=${encodeURIComponent('general ')}`,
      `/trades?account_label=${encoded}`,
      `/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=1&account_label=${encoded}`,
    ]) {
      const response = await platform.get(path);
      expect(response.status, path).toBe(400);
      expect(response.body.errors.join(' '), path).toMatch(/account_label: must be 1 to 50 letters/);
    }
    const body = await platform.post('/liquidity/rfq', {
      side: 'buy',
      underlying: 'DOGE',
      quoted_currency: 'USD',
      quantity: '1',
      account_label: 'a/b',
    });
    expect(body.status).toBe(400);
    expect(body.body.errors).toEqual(['account_label: must be 1 to 50 letters, digits, _ or - (an account label)']);
    expect(quotesOf(platform.platformCode)).toEqual([]);
  });

  it('keeps a label as given and compares it as stored: GENERAL is its own account, general shows only general', async () => {
    const moved = await platform.post('/transfers', {
      from_participant_code: platform.participantCode,
      to_participant_code: platform.participantCode,
      to_account_label: 'GENERAL',
      asset: 'USD',
      amount: '3',
    });
    expect(moved.status, moved.text).toBe(201);
    const general = await platform.get('/accounts?account_label=general');
    expect(general.body.message.map((account: any) => account.account_label)).toEqual(['general']);
    expect((await balances(platform))[`${platform.participantCode}/GENERAL/USD`]).toBe('3.00');
  });

  it('the ops deposit refuses such a label before it books anything', async () => {
    const reference = randomUUID();
    const refused = await admin(
      'deposit',
      '--participant',
      platform.participantCode,
      '--asset',
      'USD',
      '--amount',
      '5',
      '--reference',
      reference,
      '--account-label',
      'general#x',
      '--reason',
      'test',
    ).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toContain('--account-label: must be 1 to 50 letters');
    expect(Object.keys(await balances(platform)).some((key) => key.includes('#'))).toBe(false);
  });
});

describe('the signature covers the request target as sent', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  // Each spelling is signed over exactly what is sent (`send` signs the path it fetches, unchanged by fetch).
  for (const [name, target] of [
    ['%2A for *', '/accounts?account_owner=%2A'],
    ["%27 for '", '/accounts?account_owner=%27'],
    ['%7E for ~', '/accounts?account_owner=%7E'],
    ['%41 for A', '/accounts?account_owner=%41'],
    ['+ for a space', '/accounts?account_owner=a+b'],
  ]) {
    it(`accepts ${name} signed over exactly that target`, async () => {
      const response = await platform.get(target!);
      expect(response.status, response.text).toBe(200);
      expect(response.body.message).toEqual([]);
    });
  }

  it('refuses a target other than the one signed, however it decodes', async () => {
    const altered = await signedAs(platform, 'GET', '/accounts?account_owner=%41', '/accounts?account_owner=%42');
    expect(altered.status).toBe(403);
    // The bare path stays a GET's weaker form.
    const bare = await signedAs(platform, 'GET', '/accounts', '/accounts?account_owner=%41');
    expect(bare.status).toBe(200);
  });

  it('a POST is verified over its target as sent too', async () => {
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/q', event_types: ['webhook.test'] });
    const timestamp = String(ctx.clock.nowSeconds());
    const secret = Buffer.from(platform.credentials.api_secret, 'base64');
    const target = '/webhooks/endpoints?note=%41';
    const response = await fetch(`${await baseUrl()}${target}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-SVC-API-KEY': platform.credentials.api_key,
        'X-SVC-PASSPHRASE': platform.credentials.passphrase,
        'X-SVC-TIMESTAMP': timestamp,
        'X-SVC-SIGNED': sign(secret, timestamp, 'POST', target, body),
      },
      body,
    });
    expect(response.status, await response.text()).toBe(200);
  });
});

describe('free text refuses control and bidirectional formatting characters', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  it('customer names and addresses: 400 naming each field, nothing created', async () => {
    const before = (await platform.get('/participants')).body.count;
    const response = await platform.post('/participants/customers/new', {
      ...customerBody(),
      first_name: 'a\u0000b',
      last_name: '\u202eevil',
      address_one: '1 Main\u2066 Street',
      city: 'Spring\u0085field',
    });
    expect(response.status, response.text).toBe(400);
    for (const field of ['first_name', 'last_name', 'address_one', 'city'])
      expect(response.body.errors).toContain(`${field}: must not contain control or invisible formatting characters`);
    expect((await platform.get('/participants')).body.count).toBe(before);
    // Letters of any script stay welcome.
    const accented = await platform.post('/participants/customers/new', { ...customerBody(), first_name: 'Zoë' });
    expect(accented.status, accented.text).toBe(201);
  });

  it("a webhook description and a quote request's text: 400 naming the field", async () => {
    const described = await platform.post('/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/d',
      description: 'books\u202e',
    });
    expect(described.status).toBe(400);
    expect(described.body.errors).toEqual(['description: must not contain control or invisible formatting characters']);
    const quote = await platform.get(
      `/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=1&participant_code=${encodeURIComponent('\u202eX')}`,
    );
    expect(quote.status).toBe(400);
    expect(quote.body.errors.join(' ')).toContain('participant_code: must not contain control');
  });
});

describe('relationship revoke, and the transfer seen by the platform it debits', () => {
  it('a grantee books out of another platform’s customer: the debited platform lists and reads it; revoked, the grant is gone', async () => {
    const owner = await newPlatform();
    const grantee = await newPlatform();
    const [customer] = await customersViaHttp(owner, 1);
    await fund(customer!, 'USD', '50');
    await admin(
      'relationship',
      'grant',
      '--platform',
      grantee.platformCode,
      '--participant',
      customer!,
      '--reason',
      'partnership',
    );
    const ownersBefore = (await owner.get('/transfers')).body.count;
    const booked = await grantee.post('/transfers', {
      from_participant_code: customer,
      from_account_group: owner.platformCode,
      to_participant_code: grantee.participantCode,
      asset: 'USD',
      amount: '20',
    });
    expect(booked.status, booked.text).toBe(201);
    const transfer = booked.body.message;

    const listed = await owner.get(`/transfers?from_participant_code=${customer}`);
    expect(listed.status).toBe(200);
    expect(listed.body.message).toEqual([transfer]);
    expect(listed.body.count).toBe(1);
    const all = await owner.get('/transfers');
    expect(all.body.count).toBe(ownersBefore + 1);
    expect(all.body.message).toEqual([transfer]);
    const read = await owner.get(`/transfers/${transfer.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.message).toEqual(transfer);
    // The grantee still sees it as its own; a third platform sees nothing.
    expect((await grantee.get(`/transfers/${transfer.id}`)).body.message).toEqual(transfer);
    const third = await newPlatform();
    expect((await third.get(`/transfers/${transfer.id}`)).status).toBe(404);
    expect((await third.get('/transfers')).body.count).toBe(0);

    const since = ctx.clock.nowMs() - 1;
    const revoked = await admin(
      'relationship',
      'revoke',
      '--platform',
      grantee.platformCode,
      '--participant',
      customer!,
      '--reason',
      'partnership ended',
    );
    expect(revoked).toEqual({
      platform_code: grantee.platformCode,
      participant_code: customer,
      kind: 'submits_platform_transfers_for',
      revoked: true,
    });
    const audit = (await auditLog(ctx, since, 1000)).find(
      (entry) => entry.command === 'relationship revoke' && entry.changes.participant_code === customer,
    );
    expect(audit).toMatchObject({
      reason: 'partnership ended',
      changes: { platform_code: grantee.platformCode, participant_code: customer },
    });
    const refused = await grantee.post('/transfers', {
      from_participant_code: customer,
      from_account_group: owner.platformCode,
      to_participant_code: grantee.participantCode,
      asset: 'USD',
      amount: '1',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join(' ')).toContain('from_participant_code');
    // Revoking what is not granted says so and records nothing.
    await expect(
      admin(
        'relationship',
        'revoke',
        '--platform',
        grantee.platformCode,
        '--participant',
        customer!,
        '--reason',
        'again',
      ),
    ).rejects.toThrow(/no submits_platform_transfers_for relationship/);
    expect(
      (await auditLog(ctx, since, 1000)).filter(
        (entry) => entry.command === 'relationship revoke' && entry.changes.participant_code === customer,
      ),
    ).toHaveLength(1);
  });
});

describe('reference shapes', () => {
  it('a customer with jurisdiction_code alone echoes the state it names, as it echoes the country', async () => {
    const platform = await newPlatform();
    const { state: _state, country: _country, ...body } = customerBody();
    const response = await platform.post('/participants/customers/new', { ...body, jurisdiction_code: 'US-IL' });
    expect(response.status, response.text).toBe(201);
    expect(response.body.message).toMatchObject({
      jurisdiction_code: 'US-IL',
      state: 'IL',
      country: 'United States of America',
    });
    const read = await platform.get(`/participants?participant_code=${response.body.message.participant_code}`);
    expect(read.body.message[0]).toMatchObject({ state: 'IL' });
  });

  it('a trade made from a quote keeps its spread; it has no session (null)', async () => {
    const platform = await newPlatform({ spreadBps: '40' });
    await fund(platform.participantCode, 'USD', '1000');
    const quote = await platform.get('/liquidity/rfq?side=buy&underlying=DOGE&quoted_currency=USD&quantity=1000');
    expect(quote.status, quote.text).toBe(200);
    expect(quote.body.message).toMatchObject({ spread_notional: '1.00', spread_bps: '40' });
    const executed = await platform.post('/liquidity/execute', { quote_id: quote.body.message.quote_id });
    expect(executed.status, executed.text).toBe(200);
    const trade = await platform.get(`/trades/${executed.body.message.trade_id}`);
    expect(trade.body.message).toMatchObject({ spread_notional: '1.00', spread_bps: '40', session_id: null });
  });
});
