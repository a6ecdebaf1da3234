import { describe, expect, it } from 'vitest';
import { replyToBankEvent } from '../../lib/payments/apply-bank-event.js';
import { grantRelationship } from '../../lib/store/relationships.js';
import { ctx } from '../support/context.js';
import { customerBody, customersViaStore } from '../support/customers.js';
import { eventCapture, listEvents, type Envelope } from '../support/events.js';
import { fund } from '../support/ledger.js';
import { newPlatform } from '../support/service.js';
import { newCustomer } from '../support/trade-parties.js';
import { isTerminated, useTestWorkflows, tradeBody, waitForTrade } from '../support/trades.js';
import { storeSubmittedPayment } from '../support/payments.js';

/**
 * The status events that need no reference price (those that do are in the files that
 * own their pairs: liquidity, rewards, convert-withdraw): reported trades at each settlement step, award
 * distributions, and payments moved by bank events. Each is seen twice, as a platform sees it: delivered to
 * a real receiver on 127.0.0.1 (signature verified with the standardwebhooks package) and in GET /events.
 */
const capture = eventCapture();
// Bank events as their queue consumer applies them.
const bankEvent = (event: unknown) => replyToBankEvent(ctx, event);

// A spot trade left unfunded defaults 3 s after its acceptance; sessions a second apart.
useTestWorkflows({ sessionSeconds: 1, spotDeadlineSeconds: 3 });

const ofResource = (id: string) => (event: Envelope) => event.resource.id === id;
const steps = (events: Envelope[]) =>
  events.map((event) => [
    event.sequence,
    event.previous_status,
    event.data.trade_state ?? event.data.status,
    event.data.settlement_state ?? null,
  ]);

describe('trade.status_changed for a reported trade', () => {
  it('tells of each settlement step: accepted, active, then terminated as settled, numbered 1, 2, 3', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
    await fund(buyer, 'USD', '1000');
    await fund(seller, 'BTC', '1');
    const reported = await platform.post(
      '/trades',
      tradeBody(platform, { buyer, seller, price: '1000', quantity: '1' }),
    );
    expect(reported.status, reported.text).toBe(200);
    const tradeId = reported.body.message.trade_id as string;
    const settled = await waitForTrade(platform, tradeId, isTerminated);
    expect(settled.settlement_state).toBe('settled');

    const events = await capture.received(
      subscription,
      (event) => event.type === 'trade.status_changed' && ofResource(tradeId)(event),
      3,
    );
    expect(steps(events)).toEqual([
      [1, null, 'accepted', null],
      [2, 'accepted', 'active', null],
      [3, 'active', 'terminated', 'settled'],
    ]);
    for (const event of events) expect(event.resource).toEqual({ type: 'trade', id: tradeId });
    // The data is the trade as GET /trades/{trade_id} shows it, at that step: the last one is the trade now.
    expect(events[2]!.data).toEqual((await platform.get(`/trades/${tradeId}`)).body.message);
  });

  it('tells of obligations outstanding and of the default past the deadline', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    const [buyer, seller] = await Promise.all([newCustomer(platform.platformCode), newCustomer(platform.platformCode)]);
    // Only the seller delivers: the buyer defaults, the seller is counterparty_defaulted.
    await fund(seller, 'BTC', '1');
    const reported = await platform.post(
      '/trades',
      tradeBody(platform, { buyer, seller, price: '1000', quantity: '1' }),
    );
    expect(reported.status, reported.text).toBe(200);
    const tradeId = reported.body.message.trade_id as string;
    await waitForTrade(platform, tradeId, isTerminated, 20_000);

    const events = await capture.received(
      subscription,
      (event) => event.type === 'trade.status_changed' && ofResource(tradeId)(event),
      4,
    );
    // Later sessions found the same state: no event for those.
    expect(steps(events)).toEqual([
      [1, null, 'accepted', null],
      [2, 'accepted', 'active', null],
      [3, 'active', 'active', 'obligations_outstanding'],
      [4, 'active', 'terminated', 'defaulted'],
    ]);
    expect(events[3]!.data.parties.map((party: any) => party.settlement_state)).toEqual([
      'defaulted',
      'counterparty_defaulted',
    ]);
  });

  it('tells every platform that may read the trade: the reporter and the platform of a party', async () => {
    const reporter = await newPlatform();
    const other = await newPlatform();
    const [reporterSide, otherSide] = await Promise.all([capture.subscribe(reporter), capture.subscribe(other)]);
    const [buyer, seller] = await Promise.all([newCustomer(reporter.platformCode), newCustomer(other.platformCode)]);
    await grantRelationship(ctx, reporter.platformCode, 'submits_platform_transfers_for', seller);
    await fund(buyer, 'USD', '1000');
    await fund(seller, 'BTC', '1');
    const reported = await reporter.post(
      '/trades',
      tradeBody(reporter, { buyer, seller, price: '1000', quantity: '1' }),
    );
    expect(reported.status, reported.text).toBe(200);
    const tradeId = reported.body.message.trade_id as string;
    await waitForTrade(reporter, tradeId, isTerminated);
    const match = (event: Envelope) => event.type === 'trade.status_changed' && ofResource(tradeId)(event);
    const [seenByReporter, seenByOther] = await Promise.all([
      capture.received(reporterSide, match, 3),
      capture.received(otherSide, match, 3),
    ]);
    expect(steps(seenByOther)).toEqual(steps(seenByReporter));
    expect(seenByOther.map((event) => event.data)).toEqual(seenByReporter.map((event) => event.data));
  });
});

describe('award distributions', () => {
  it('tell of each recipient trade and, once, of the completed distribution', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    // 30 recipients: two chunks (23 fit one transaction).
    const customers = await customersViaStore(platform.platformCode, 30);
    await fund(platform.participantCode, 'BTC', '1', 'awards');
    const response = await platform.post('/awards/distribute', {
      asset: 'BTC',
      quantity: '0.001',
      participant_codes: customers,
    });
    expect(response.status, response.text).toBe(201);
    const { request_id: requestId, confirms } = response.body.message;

    const completed = await capture.received(subscription, (event) => event.type === 'award_distribution.completed', 1);
    expect(completed[0]).toMatchObject({
      resource: { type: 'award_distribution', id: requestId },
      sequence: 1,
      previous_status: 'distributing',
      data: {
        request_id: requestId,
        asset: 'BTC',
        quantity: '0.00100000',
        recipient_count: 30,
        total: '0.03000000',
        chunk_count: 2,
        status: 'completed',
      },
    });
    const trades = await capture.received(subscription, (event) => event.type === 'trade.status_changed', 30);
    expect(trades.map((event) => event.resource.id).sort()).toEqual(
      confirms.map((confirm: any) => confirm.trade_id).sort(),
    );
    for (const event of trades)
      expect(event).toMatchObject({
        sequence: 1,
        previous_status: null,
        data: { trade_state: 'terminated', settlement_state: 'settled' },
      });
    // Each recipient's balance too: one account_balance.changed per recipient.
    const balances = (await listEvents(platform, '&type=account_balance.changed')).filter(
      (event) => event.data.movement.type === 'award_distribution',
    );
    expect(balances.map((event) => event.data.participant_code).sort()).toEqual([...customers].sort());
  });
});

describe('payment.status_changed', () => {
  const submittedPayment = (platform: { platformCode: string; participantCode: string }) =>
    storeSubmittedPayment(ctx, platform, { amount: '25.00', reference: 'events' });

  it('tells of each bank event that moves a payment, once: a repeat is no event', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    await fund(platform.participantCode, 'USD', '100', 'ach_clearing');
    const walked = await submittedPayment(platform);
    for (const status of ['pending', 'pending', 'posted', 'reversed', 'reversed'])
      await bankEvent({ transaction_id: walked, status });
    const failed = await submittedPayment(platform);
    await bankEvent({ transaction_id: failed, status: 'failed' });

    const walkedEvents = await capture.received(
      subscription,
      (event) => event.type === 'payment.status_changed' && ofResource(walked)(event),
      3,
    );
    expect(steps(walkedEvents)).toEqual([
      [2, 'submitted', 'pending', null],
      [3, 'pending', 'posted', null],
      [4, 'posted', 'reversed', null],
    ]);
    expect(walkedEvents[2]!.data).toEqual(
      (await platform.get(`/payments/status?transaction_id=${walked}`)).body.message[0],
    );
    const failedEvents = await capture.received(
      subscription,
      (event) => event.type === 'payment.status_changed' && ofResource(failed)(event),
      1,
    );
    expect(steps(failedEvents)).toEqual([[3, 'submitted', 'failed', null]]);
    expect(failedEvents[0]!.resource).toEqual({ type: 'payment', id: failed });
  });
});

describe('personal data', () => {
  it('never reaches an event: no names, e-mails, addresses or ID numbers in any event body of a platform with customers', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    const customer = customerBody();
    const created = await platform.post('/participants/customers/new', customer);
    expect(created.status, created.text).toBe(201);
    const code = created.body.message.participant_code as string;
    await fund(code, 'USD', '10');
    const transfer = await platform.post('/transfers', {
      from_participant_code: code,
      to_participant_code: code,
      to_account_label: 'savings',
      asset: 'USD',
      amount: '4',
    });
    expect(transfer.status, transfer.text).toBe(201);
    await capture.received(subscription, (event) => event.data.participant_code === code, 3);
    const bodies =
      subscription.receiver.received.map((entry) => entry.body).join('\n') + JSON.stringify(await listEvents(platform));
    for (const value of [
      customer.first_name,
      customer.last_name,
      customer.email,
      customer.address_one,
      customer.city,
      customer.id_number,
      customer.date_of_birth,
    ]) {
      expect(bodies).not.toContain(String(value));
    }
  });
});
