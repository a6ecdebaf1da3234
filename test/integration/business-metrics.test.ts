import { randomUUID } from 'node:crypto';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { StepFunctionsWorkflow } from '../../lib/runtime/step-functions-workflow.js';

// Metrics on for this file, as deployed (vitest.config.ts turns them off elsewhere); the context is built on import.
vi.hoisted(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

const { ctx, testContext } = await import('../support/context.js');
const { captureOutput } = await import('../support/output.js');
const { fund, transferBody } = await import('../support/ledger.js');
const { achBuy } = await import('../support/payments.js');
const { setPrice } = await import('../support/pricing.js');
const { newPlatform } = await import('../support/service.js');
const { newCustomer } = await import('../support/trade-parties.js');
const { isTerminated, useTestWorkflows, tradeBody, waitForTrade } = await import('../support/trades.js');
const { record } = await import('../support/sqs.js');
const { runAdmin } = await import('../../infra/ops/cli.js');
const { runsAs } = await import('../support/functions.js');
const bankEvents = await import('../../functions/payments/apply-bank-event.js');
const bindBankEventQueue = runsAs('functions/payments/apply-bank-event.ts', bankEvents.bind);
const { METRIC, METRICS_NAMESPACE, SERVICE_NAME } = await import('../../lib/observability/metric-names.js');
const { sweepOpenTrades } = await import('../../lib/settlement/sweep-open-trades.js');

/**
 * The business counts (docs/operations.md, "Metrics and traces"), read off what the service writes (CloudWatch's embedded metric
 * format), named by the constants the stack's alarms and dashboard use (`lib/observability/metric-names.ts`;
 * test/infra/operations.test.ts checks the alarms' side): each is emitted where the business happens, once
 * per committed change, in the `TradingSettlement` namespace with the `service` dimension the alarms name.
 *
 * Pairs priced here, at the values the other files that share them use: LTC/USD 100, USDC/EUR 0.9 (and the
 * USDC network fee 1.5).
 */
const output = captureOutput();
const ETH_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

type Doc = Record<string, any>;

/** The documents written from `mark` on that carry metric `name`. */
const emitted = (name: string, mark: number): Doc[] =>
  output
    .emf()
    .slice(mark)
    .filter((doc) => doc[name] !== undefined);
const mark = () => output.emf().length;

/** A business metric's document: the metric alone, in the service's namespace, by `service` (and `extra`) only. */
function expectBusinessDocument(doc: Doc | undefined, name: string, extra: string[] = []) {
  expect(doc, name).toBeDefined();
  expect(doc!._aws.CloudWatchMetrics).toEqual([
    { Namespace: METRICS_NAMESPACE, Dimensions: [['service', ...extra]], Metrics: [{ Name: name, Unit: 'Count' }] },
  ]);
  expect(doc!.service).toBe(SERVICE_NAME);
  // Never a request's route: the alarm watches the service-wide metric.
  expect(doc).not.toHaveProperty('route');
}

/** The TradesAccepted documents from `from` on about `reference` (a trade id, or a distribution's id). */
const accepted = (reference: string, from = 0) =>
  emitted(METRIC.tradesAccepted, from).filter((doc) => doc.reference === reference);

// Settlement in this file's process: 1-second sessions, spot deadlines of 3 seconds (a trade left unfunded defaults).
useTestWorkflows({ sessionSeconds: 1, spotDeadlineSeconds: 3 });
beforeAll(async () => {
  await Promise.all([setPrice('LTC', 'USD', '100'), setPrice('USDC', 'EUR', '0.9')]);
  await runAdmin(['fee', 'set', '--asset', 'USDC', '--quantity', '1.5', '--reason', 'test'], { ctx });
});

describe('TradesAccepted', () => {
  it('counts each trade once on every booking path, with the path named; a refused or replayed request counts nothing', async () => {
    const platform = await newPlatform();
    const [first, second] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
    await Promise.all([
      fund(platform.participantCode, 'USD', '100000'),
      fund(platform.participantCode, 'EUR', '100000'),
      fund(platform.participantCode, 'LTC', '1', 'awards'),
    ]);
    const start = mark();

    const requestId = randomUUID();
    const body = tradeBody(platform, {
      buyer: first!,
      seller: second!,
      price: '100',
      quantity: '1',
      symbol: 'LTC/USD',
    });
    const reported = await platform.post('/trades', body, { headers: { 'X-Request-Id': requestId } });
    expect(reported.status, reported.text).toBe(200);
    // The same request again is answered from idempotency: nothing new was booked.
    const replayed = await platform.post('/trades', body, { headers: { 'X-Request-Id': requestId } });
    expect(replayed.status, replayed.text).toBe(200);
    const refused = await platform.post('/trades', {
      ...body,
      client_trade_id: `ct-${randomUUID()}`,
      trade_quantity: '-1',
    });
    expect(refused.status, refused.text).toBe(400);

    const quote = await platform.get('/liquidity/rfq?side=buy&underlying=LTC&quoted_currency=USD&quantity=1');
    expect(quote.status, quote.text).toBe(200);
    const executed = await platform.post('/liquidity/execute', { quote_id: quote.body.message.quote_id });
    expect(executed.status, executed.text).toBe(200);

    const reward = await platform.post('/rewards', {
      underlying: 'LTC',
      quoted_currency: 'USD',
      quantity: '0.1',
      participant_code: first,
    });
    expect(reward.status, reward.text).toBe(201);
    const funded = await platform.post('/awards/fund', { asset: 'LTC', quoted_currency: 'USD', quantity: '0.1' });
    expect(funded.status, funded.text).toBe(201);
    const distribution = await platform.post('/awards/distribute', {
      asset: 'LTC',
      quantity: '0.01',
      participant_codes: [first, second],
    });
    expect(distribution.status, distribution.text).toBe(201);

    const convertQuote = await platform.get(
      `/convert_withdraw/rfq?side=buy&underlying=USDC&quoted_currency=EUR&quantity=10&withdrawal_address=${ETH_ADDRESS}`,
    );
    expect(convertQuote.status, convertQuote.text).toBe(200);
    const converted = await platform.post('/convert_withdraw/execute', {
      quote_id: convertQuote.body.message.quote_id,
    });
    expect(converted.status, converted.text).toBe(200);

    const bookings: [string, string, number][] = [
      [reported.body.message.trade_id, 'reported', 1],
      [executed.body.message.trade_id, 'quote_execution', 1],
      [reward.body.message.trade_id, 'reward', 1],
      [funded.body.message.trade_id, 'award_fund', 1],
      // One chunk of two recipients: both its trades in one count.
      [distribution.headers.get('x-request-id')!, 'award_distribution', 2],
      [converted.body.message.trade_id, 'convert_withdraw', 1],
    ];
    for (const [reference, booking, count] of bookings) {
      const docs = accepted(reference, start);
      expect(docs, booking).toHaveLength(1);
      expectBusinessDocument(docs[0], METRIC.tradesAccepted);
      expect(docs[0]).toMatchObject({ booking, reference, [METRIC.tradesAccepted]: count });
    }
    // Nothing else was counted as accepted meanwhile (the refused and the replayed request).
    expect(
      emitted(METRIC.tradesAccepted, start).filter((doc) =>
        bookings.every(([reference]) => doc.reference !== reference),
      ),
    ).toEqual([]);
  });
});

describe('TradesSettled and TradesDefaulted', () => {
  it('come from the settlement workflow: a funded trade settles, an unfunded one defaults at its deadline', async () => {
    const platform = await newPlatform();
    const [buyer, seller, unfundedBuyer, unfundedSeller] = await Promise.all(
      [1, 2, 3, 4].map(() => newCustomer(platform.platformCode)),
    );
    await Promise.all([fund(buyer!, 'USD', '100'), fund(seller!, 'BTC', '1')]);
    const start = mark();
    const funded = await platform.post(
      '/trades',
      tradeBody(platform, { buyer: buyer!, seller: seller!, price: '100', quantity: '1' }),
    );
    expect(funded.status, funded.text).toBe(200);
    const unfunded = await platform.post(
      '/trades',
      tradeBody(platform, { buyer: unfundedBuyer!, seller: unfundedSeller!, price: '100', quantity: '1' }),
    );
    expect(unfunded.status, unfunded.text).toBe(200);

    const settled = await waitForTrade(platform, funded.body.message.trade_id, isTerminated, 10_000);
    expect(settled.settlement_state).toBe('settled');
    const defaulted = await waitForTrade(platform, unfunded.body.message.trade_id, isTerminated, 10_000);
    expect(defaulted.settlement_state).toBe('defaulted');

    const about = (name: string, tradeId: string) => emitted(name, start).filter((doc) => doc.trade_id === tradeId);
    expect(about(METRIC.tradesSettled, settled.trade_id)).toHaveLength(1);
    expectBusinessDocument(about(METRIC.tradesSettled, settled.trade_id)[0], METRIC.tradesSettled);
    expect(about(METRIC.tradesSettled, settled.trade_id)[0]![METRIC.tradesSettled]).toBe(1);
    expect(about(METRIC.tradesDefaulted, defaulted.trade_id)).toHaveLength(1);
    expectBusinessDocument(about(METRIC.tradesDefaulted, defaulted.trade_id)[0], METRIC.tradesDefaulted);
    // Each only for its own outcome.
    expect(about(METRIC.tradesDefaulted, settled.trade_id)).toEqual([]);
    expect(about(METRIC.tradesSettled, defaulted.trade_id)).toEqual([]);
  });
});

describe('PaymentStatusChanged and NegativeClearingBalances', () => {
  it('count each status a payment reaches, and the bank reversal that drives the ACH clearing account below zero', async () => {
    const platform = await newPlatform();
    await fund(platform.participantCode, 'USD', '100', 'ach_clearing');
    const start = mark();
    const { transaction_id: transactionId } = await achBuy(platform, { total: '98.50' });

    // The bank's events arrive through the queue, as on AWS; a redelivered one changes nothing.
    const consume = bindBankEventQueue(ctx);
    const event = (id: string, status: string) =>
      record(id, transactionId, JSON.stringify({ transaction_id: transactionId, status }));
    expect(
      await consume({ Records: [event('m1', 'pending'), event('m2', 'posted'), event('m3', 'posted')] }, {} as never),
    ).toEqual({ batchItemFailures: [] });

    // The platform spends what the bank brought in, so the reversal leaves the clearing account at -100.00.
    const spend = await platform.post(
      '/transfers',
      transferBody(platform, { from_account_label: 'ach_clearing', to_account_label: 'general', amount: '101.50' }),
    );
    expect(spend.status, spend.text).toBe(201);
    vi.spyOn(ctx.logger, 'warn').mockImplementation(() => undefined);
    try {
      expect(await consume({ Records: [event('m4', 'reversed')] }, {} as never)).toEqual({ batchItemFailures: [] });
    } finally {
      vi.restoreAllMocks();
    }

    const statuses = emitted(METRIC.paymentStatusChanged, start).filter((doc) => doc.transaction_id === transactionId);
    expect(statuses.map((doc) => [doc.status, doc[METRIC.paymentStatusChanged]])).toEqual([
      ['submitted', 1],
      ['pending', 1],
      ['posted', 1],
      ['reversed', 1],
    ]);
    for (const doc of statuses) expectBusinessDocument(doc, METRIC.paymentStatusChanged, ['status']);

    const negative = emitted(METRIC.negativeClearingBalances, start).filter(
      (doc) => doc.platform_code === platform.platformCode,
    );
    expect(negative).toHaveLength(1);
    expectBusinessDocument(negative[0], METRIC.negativeClearingBalances);
    expect(negative[0]).toMatchObject({ [METRIC.negativeClearingBalances]: 1, balance: '-100' });
  });
});

describe('TradesPastDeadline', () => {
  it('is what every sweep run reports, 0 included: the count of visited trades past their deadline', async () => {
    // The sweep reads every overdue trade of the shared table, so it runs in an era of its own (its clock
    // decades back, before any test's trades are due): it visits nothing and postpones nobody's trade. Its
    // count of trades past their deadline is settlement-sweep.test.ts's to test; here, that the count it
    // reports is the gauge the alarm watches.
    const sweepCtx = testContext({
      workflow: new StepFunctionsWorkflow(
        { send: async () => ({ status: 'RUNNING' }) } as unknown as SFNClient,
        'arn:aws:states:us-east-1:123456789012:stateMachine:Settlement',
      ),
    });
    sweepCtx.clock.advance(Date.parse('1980-06-01T00:00:00Z') - Date.now());
    const start = mark();
    const report = await sweepOpenTrades(sweepCtx);
    expect(report).toMatchObject({ visited: 0, past_deadline: 0 });
    const [gauge, ...more] = emitted(METRIC.tradesPastDeadline, start);
    expect(more).toEqual([]);
    expectBusinessDocument(gauge, METRIC.tradesPastDeadline);
    expect(gauge![METRIC.tradesPastDeadline]).toBe(report.past_deadline);
  });
});
