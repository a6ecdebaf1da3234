import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { routes } from '../../infra/routes.js';
import { SYSTEM_PARTICIPANTS, systemAccount } from '../../lib/domain/ledger.js';
import { acceptedTrade } from '../../lib/domain/trade.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { KEY_ITEM_KEPT_FOR_READS_MS } from '../../lib/store/api-keys.js';
import { newId } from '../../lib/store/codes.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { tradeVisibilityEntity } from '../../lib/store/entities/trade.js';
import { tradeItems } from '../../lib/store/trades.js';
import { withdrawalCreationItems } from '../../lib/store/withdrawals.js';
import { clientWith, ctx, testContext } from '../support/context.js';
import { customerBody } from '../support/customers.js';
import { fund, transferBody } from '../support/ledger.js';
import { storeSubmittedPayment } from '../support/payments.js';
import { newPlatform, send, serviceFor, type TestPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { tradeBody } from '../support/trades.js';

/**
 * DynamoDB calls per read (docs/performance.md, "DynamoDB calls per request"): on a warm function a GET by id
 * is one call and a list at most two. The requests go through HTTP to a server whose context's client counts
 * every call it sends; the data is set up through this file's own context, so only the measured requests are
 * counted. The service's clock is held while measuring, so the key item read by the warming request is the one
 * the measured request is verified against, however slow the machine.
 */

const counts = new Map<string, number>();
let counting = false;
const counted = testContext({
  db: clientWith(
    (next, context) => async (args) => {
      if (counting) counts.set(String(context.commandName), (counts.get(String(context.commandName)) ?? 0) + 1);
      return next(args);
    },
    'countCalls',
    'initialize',
  ),
});
const service = serviceFor(counted);

let platform: TestPlatform;
/** A platform whose list of trades holds one another platform reported. */
let partner: TestPlatform;
/** The same, its entry as written before entries carried the trade (no `reported_by`). */
let legacyPartner: TestPlatform;
let legacyTradeId: string;
const paths: Record<string, string> = {};
let grantedTransferId: string;

/** The calls one request makes, by command, after the same request once to warm the function. */
async function callsOf(path: string, by = platform): Promise<Map<string, number>> {
  const get = () => send('GET', path, undefined, { credentials: by.credentials, via: service });
  const warm = await get();
  expect(warm.status, `${path}: ${warm.text}`).toBe(200);
  counts.clear();
  counting = true;
  try {
    const measured = await get();
    expect(measured.status, `${path}: ${measured.text}`).toBe(200);
  } finally {
    counting = false;
  }
  return new Map(counts);
}

const total = (calls: Map<string, number>) => [...calls.values()].reduce((sum, n) => sum + n, 0);

beforeAll(async () => {
  const reporter = await newPlatform();
  [platform, partner, legacyPartner] = await Promise.all([newPlatform(), newPlatform(), newPlatform()]);
  await fund(platform.participantCode, 'USD', '1000');

  const transfer = await platform.post('/transfers', transferBody(platform));
  expect(transfer.status, transfer.text).toBe(201);

  const customer = customerBody();
  const created = await platform.post('/participants/customers/new', customer);
  expect(created.status, created.text).toBe(201);

  const accounts = await platform.get(`/accounts?participant_code=${platform.participantCode}`);
  expect(accounts.status, accounts.text).toBe(200);

  // A trade of the platform's own, and one another platform reported with a customer of a third's as a party.
  const [seller, ownBuyer, reportedBuyer, reporterSeller, legacyBuyer] = await Promise.all([
    newCustomer(platform.platformCode),
    newCustomer(platform.platformCode),
    newCustomer(partner.platformCode),
    newCustomer(reporter.platformCode),
    newCustomer(legacyPartner.platformCode),
  ]);
  const store = async (by: TestPlatform, buyer: string, sellerCode: string, groups: [string, string]) => {
    const nowMs = ctx.clock.nowMs();
    const report = validateTradeReport(tradeBody(by, { buyer, seller: sellerCode }), {
      platformCode: by.platformCode,
      nowMs,
    });
    if (!report.ok) throw new Error(report.errors.join('; '));
    const trade = acceptedTrade(report.value, { tradeId: newId(), nowMs, accountGroups: groups });
    await transactWrite(ctx, tradeItems(ctx, trade));
    return trade.trade_id;
  };
  const tradeId = await store(platform, ownBuyer, seller, [platform.platformCode, platform.platformCode]);
  await store(reporter, reportedBuyer, reporterSeller, [partner.platformCode, reporter.platformCode]);
  legacyTradeId = await store(reporter, legacyBuyer, reporterSeller, [
    legacyPartner.platformCode,
    reporter.platformCode,
  ]);
  await ctx.db.send(
    new UpdateCommand({
      Key: tradeVisibilityEntity.key({ trade_id: legacyTradeId, platform_code: legacyPartner.platformCode }),
      TableName: ctx.tables.main,
      UpdateExpression: 'REMOVE reported_by',
    }),
  );

  await storeSubmittedPayment(ctx, platform, { amount: '10.00', reference: randomUUID() });

  const withdrawalId = randomUUID();
  const nowMs = ctx.clock.nowMs();
  const account = (label: string) => ({
    participant_code: platform.participantCode,
    account_group: platform.platformCode,
    account_label: label,
    asset: 'BTC',
  });
  await transactWrite(
    ctx,
    withdrawalCreationItems(ctx, {
      withdrawal_request_id: withdrawalId,
      platform_code: platform.platformCode,
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: 'general',
      asset: 'BTC',
      network: 'bitcoin',
      address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      requested_amount: '0.00100000',
      fee_amount: '0.00001000',
      fee_notional: '1.00',
      quoted_currency: 'USD',
      trade_id: randomUUID(),
      quote_id: randomUUID(),
      status: 'PENDING',
      transaction_hash: null,
      source_account: account('general'),
      escrow_account: account('withdrawal_escrow'),
      fee_account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'network_fees', 'BTC'),
      created_at: nowMs,
      updated_at: nowMs,
    }),
  );

  // A transfer another platform booked out of this platform's customer under a grant: this platform reads its copy.
  const grantee = await newPlatform();
  await fund(created.body.message.participant_code, 'USD', '50');
  await runAdmin(
    [
      'relationship',
      'grant',
      '--platform',
      grantee.platformCode,
      '--participant',
      created.body.message.participant_code,
      '--reason',
      'test',
    ],
    { ctx },
  );
  const granted = await grantee.post('/transfers', {
    from_participant_code: created.body.message.participant_code,
    from_account_group: platform.platformCode,
    to_participant_code: grantee.participantCode,
    asset: 'USD',
    amount: '20',
  });
  expect(granted.status, granted.text).toBe(201);
  grantedTransferId = granted.body.message.id;

  const endpoint = await platform.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/read-calls' });
  expect(endpoint.status, endpoint.text).toBe(200);
  const events = await platform.get('/events?page_size=1');
  expect(events.status, events.text).toBe(200);

  const accountId = accounts.body.message[0].account_id;
  Object.assign(paths, {
    '/participants/{email}': `/participants/${encodeURIComponent(String(customer.email))}`,
    '/accounts/{account_id}': `/accounts/${accountId}`,
    '/accounts/{account_id}/movements': `/accounts/${accountId}/movements`,
    '/transfers/{id}': `/transfers/${transfer.body.message.id}`,
    '/trades/{trade_id}': `/trades/${tradeId}`,
    '/withdrawals/requests/{id}': `/withdrawals/requests/${withdrawalId}`,
    '/events/{id}': `/events/${events.body.message[0].id}`,
    '/webhooks/endpoints/{id}': `/webhooks/endpoints/${endpoint.body.message.id}`,
    '/webhooks/endpoints/{id}/attempts': `/webhooks/endpoints/${endpoint.body.message.id}/attempts`,
  });
});

/** Every signed GET that writes nothing: a read by id (a path parameter it reads one record by) or a list. */
const reads = routes.filter((route) => route.method === 'GET' && route.area !== null && !route.writes);
const byId = reads.filter((route) => /\{[^}]+\}$/.test(route.path) && !route.lists);
const lists = reads.filter((route) => !byId.includes(route));

describe('DynamoDB calls of a warm read', () => {
  // Held while each test runs, so the key item kept for 5 s is the one each read is verified against.
  beforeEach(() => counted.clock.hold());
  afterEach(() => counted.clock.reset());

  it('covers every signed read of the route table', () => {
    expect(byId.map((route) => route.path).sort()).toEqual([
      '/accounts/{account_id}',
      '/events/{id}',
      '/participants/{email}',
      '/trades/{trade_id}',
      '/transfers/{id}',
      '/webhooks/endpoints/{id}',
      '/withdrawals/requests/{id}',
    ]);
  });

  it.each(byId.map((route) => route.path))('GET %s: exactly one call', async (path) => {
    const calls = await callsOf(paths[path] ?? path);
    expect(total(calls), JSON.stringify(Object.fromEntries(calls))).toBe(1);
  });

  it.each(lists.map((route) => route.path))('GET %s: at most two calls', async (path) => {
    const calls = await callsOf(paths[path] ?? path);
    expect(total(calls), JSON.stringify(Object.fromEntries(calls))).toBeLessThanOrEqual(2);
  });

  // Another platform's trade on the page comes whole with its entry in the platform's list; an entry from before
  // entries carried the trade names it, and its trade is read with one BatchGetItem after the page's Query.
  it("GET /trades with another platform's trade on the page: the page and its count, side by side", async () => {
    const calls = await callsOf('/trades', partner);
    expect(Object.fromEntries(calls)).toEqual({ QueryCommand: 2 });
  });

  it('GET /trades with an entry from before entries carried the trade: that trade read in one batch', async () => {
    const calls = await callsOf('/trades', legacyPartner);
    expect(Object.fromEntries(calls)).toEqual({ QueryCommand: 2, BatchGetItemCommand: 1 });
    const [listed, read] = await Promise.all([
      legacyPartner.get('/trades'),
      legacyPartner.get(`/trades/${legacyTradeId}`),
    ]);
    expect(listed.body.message).toEqual([read.body.message]);
  });

  it('GET /transfers/{id} of the copy a platform sees of a transfer booked under a grant: one call', async () => {
    const calls = await callsOf(`/transfers/${grantedTransferId}`);
    expect(Object.fromEntries(calls)).toEqual({ BatchGetItemCommand: 1 });
  });

  it('a read whose kept key item is 5 s old reads the key again, then is warm again', async () => {
    const path = paths['/transfers/{id}']!;
    expect(total(await callsOf(path))).toBe(1);
    counted.clock.advance(KEY_ITEM_KEPT_FOR_READS_MS);
    counts.clear();
    counting = true;
    try {
      const response = await send('GET', path, undefined, { credentials: platform.credentials, via: service });
      expect(response.status, response.text).toBe(200);
    } finally {
      counting = false;
    }
    expect(Object.fromEntries(counts)).toEqual({ GetItemCommand: 1, BatchGetItemCommand: 1 });
    expect(total(await callsOf(path))).toBe(1);
  });
});
