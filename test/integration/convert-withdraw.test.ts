import { replyToCustodyEvent } from '../../lib/withdrawals/apply-custody-event.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { ValidationError } from '../../lib/domain/errors.js';
import { Money } from '../../lib/domain/money.js';
import { networkFeeAccount, onChainBoundaryAccount, withdrawalEscrowAccount } from '../../lib/domain/withdrawals.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { getWithdrawal } from '../../lib/store/withdrawals.js';
import { customersViaHttp } from '../support/customers.js';
import { balances, fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { countingInstance, newPlatform, send, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';
import { eventCapture } from '../support/events.js';

// The event function's handler bound to this file's context, as Lambda binds it to its own.
/** One custody event, as the queue consumer applies each message (`functions/withdrawals/apply-custody-event.ts`). */
const custodyEventHandler = (event: unknown) => replyToCustodyEvent(ctx, event);

// EIP-55's own example: mixed case that carries a valid checksum.
const ETH_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
// The same address with one letter's case flipped: the checksum no longer matches.
const BAD_ETH_ADDRESS = '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const ETH = (amount: string) => amount.padEnd(amount.indexOf('.') + 19, '0');

const rfq = (params: Record<string, string>) => `/convert_withdraw/rfq?${new URLSearchParams(params).toString()}`;
const buyEth = (extra: Record<string, string> = {}) =>
  rfq({ side: 'buy', underlying: 'ETH', quoted_currency: 'EUR', withdrawal_address: ETH_ADDRESS, ...extra });

const capture = eventCapture();

// Prices and network fees are shared by every test file of the run; this file owns ETH/EUR, USDC/USD and
// the ETH and USDC fees.
beforeAll(async () => {
  await setPrice('ETH', 'EUR', '2500');
  await setPrice('USDC', 'USD', '1');
  await runAdmin(['fee', 'set', '--asset', 'ETH', '--quantity', '0.002', '--reason', 'test'], { ctx });
  await runAdmin(['fee', 'set', '--asset', 'USDC', '--quantity', '1.5', '--reason', 'test'], { ctx });
});

afterEach(() => ctx.clock.reset());

async function quote(platform: TestPlatform, path: string) {
  const response = await platform.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body.message;
}

describe('GET /convert_withdraw/rfq', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  it('quotes 1 ETH with the network fee on top: total_notional = price × quantity + network_fee_notional', async () => {
    const message = await quote(platform, buyEth({ quantity: '1' }));
    expect(message).toEqual({
      request_id: expect.any(String),
      participant_code: platform.participantCode,
      quoted_currency: 'EUR',
      side: 'buy',
      quantity: ETH('1.0'),
      price: '2500',
      quote_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expire_ts: expect.any(Number),
      account_group: platform.platformCode,
      account_label: 'general',
      obo_participant: null,
      underlying: 'ETH',
      total_notional: '2505.00',
      network_fee_notional: '5.00',
      network_fee_quantity: ETH('0.002'),
      main_quote_id: message.quote_id,
      asset_cost_notional: '2500.00',
      spread_notional: '0.00',
      spread_bps: '0',
      settlement_type: null,
      issuer_fee_payor_type: null,
      issuer_fee_rate: null,
      issuer_fee_amount: null,
      payment_processor: null,
      withdrawal_address: ETH_ADDRESS,
    });
  });

  it('prices the fee at the platform’s spread price too, and adds it on top of a given total', async () => {
    const spread = await newPlatform({ spreadBps: '100' });
    const byQuantity = await quote(spread, buyEth({ quantity: '1' }));
    expect(byQuantity).toMatchObject({
      price: '2525',
      network_fee_notional: '5.05',
      asset_cost_notional: '2525.00',
      total_notional: '2530.05',
    });

    const byTotal = await quote(platform, buyEth({ total: '100' }));
    expect(byTotal).toMatchObject({
      quantity: ETH('0.04'),
      asset_cost_notional: '100.00',
      network_fee_notional: '5.00',
      total_notional: '105.00',
    });

    const usdc = await quote(
      platform,
      rfq({ side: 'buy', underlying: 'USDC', quoted_currency: 'USD', withdrawal_address: ETH_ADDRESS, quantity: '10' }),
    );
    expect(usdc).toMatchObject({
      quantity: '10.000000',
      network_fee_quantity: '1.500000',
      network_fee_notional: '1.50',
      total_notional: '11.50',
    });
  });

  it('refuses side=sell with 400', async () => {
    const response = await platform.get(buyEth({ side: 'sell', quantity: '1' }));
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual(['side: must be buy']);
  });

  it('refuses a malformed address (bad checksum, wrong network) with 400, with every other problem at once', async () => {
    const badChecksum = await platform.get(buyEth({ quantity: '1', withdrawal_address: BAD_ETH_ADDRESS }));
    expect(badChecksum.status).toBe(400);
    expect(badChecksum.body.errors).toEqual([
      'withdrawal_address: not a valid ethereum address (EIP-55 checksum mismatch)',
    ]);

    const bitcoin = await platform.get(
      buyEth({
        side: 'sell',
        quantity: '1',
        total: '5',
        withdrawal_address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      }),
    );
    expect(bitcoin.status).toBe(400);
    expect(bitcoin.body.errors).toEqual([
      'side: must be buy',
      'quantity: give exactly one of quantity or total, not both',
      'withdrawal_address: not a valid ethereum address (must be 0x followed by 40 hexadecimal characters)',
    ]);
  });

  it('refuses an asset with no network fee set, and a participant that is not the platform’s', async () => {
    const response = await platform.get(
      rfq({
        side: 'buy',
        underlying: 'DOGE',
        quoted_currency: 'USD',
        withdrawal_address: 'DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L',
        quantity: '1',
        participant_code: 'NOPE42',
      }),
    );
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      'underlying: withdrawals of DOGE are not available (no network fee is set)',
      "participant_code: no participant 'NOPE42' of this platform",
    ]);
  });
});

describe('POST /convert_withdraw/execute and custody events', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
    await fund(platform.participantCode, 'EUR', '10000');
  });

  const escrow = () => withdrawalEscrowAccount(platform.platformCode, 'ETH');

  async function executeOneEth(participantCode?: string) {
    const quoted = await quote(
      platform,
      buyEth({ quantity: '1', ...(participantCode && { participant_code: participantCode }) }),
    );
    const response = await platform.post('/convert_withdraw/execute', { quote_id: quoted.quote_id });
    expect(response.status, response.text).toBe(200);
    return { quoted, message: response.body.message };
  }

  it('executes once: 200 with trade_id and a PENDING withdrawal; total_notional paid, quantity escrowed, fee to the fee account', async () => {
    const feesBefore = await balanceOf(ctx, networkFeeAccount('ETH'));
    const escrowBefore = await balanceOf(ctx, escrow());
    const { quoted, message } = await executeOneEth();
    expect(message).toEqual({
      request_id: quoted.request_id,
      quote: quoted,
      trade_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      trade_ids_list: [message.trade_id],
      status: 'Completed',
      withdrawal_request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });

    const after = await balances(platform);
    expect(after[`${platform.participantCode}/general/EUR`]).toBe('7495.00');
    // Bought and withdrawn in one movement: the participant never holds the ETH.
    expect(after[`${platform.participantCode}/general/ETH`] ?? ETH('0.0')).toBe(ETH('0.0'));
    expect((await balanceOf(ctx, escrow())).minus(escrowBefore).toFixed()).toBe('1');
    expect((await balanceOf(ctx, networkFeeAccount('ETH'))).minus(feesBefore).toFixed()).toBe('0.002');

    const withdrawal = await getWithdrawal(ctx, message.withdrawal_request_id);
    expect(withdrawal).toMatchObject({
      status: 'PENDING',
      address: ETH_ADDRESS,
      network: 'ethereum',
      asset: 'ETH',
      requested_amount: ETH('1.0'),
      fee_amount: ETH('0.002'),
      trade_id: message.trade_id,
      quote_id: quoted.quote_id,
      participant_code: platform.participantCode,
    });

    const trade = await platform.get(`/trades/${message.trade_id}`);
    expect(trade.body.message).toMatchObject({
      client_trade_id: quoted.quote_id,
      trade_state: 'terminated',
      symbol: 'ETH/EUR',
      trade_quantity: ETH('1.0'),
    });

    const again = await platform.post('/convert_withdraw/execute', { quote_id: quoted.quote_id });
    expect(again.status).toBe(409);
    expect(again.body.errors).toEqual(['quote_id: the quote has already been executed']);
    expect(await balances(platform)).toEqual(after);
  });

  it('on a warm function is two calls, the quote read and the transaction: the escrow and fee accounts, only credited, are not read', async () => {
    const counting = countingInstance();
    const { service } = counting;
    const usedSignatures = new Set<string>();
    const request = (method: string, path: string, body?: unknown) =>
      send(method, path, body, { credentials: platform.credentials, via: service, usedSignatures });
    const execute = async () => {
      const quoted = await request('GET', buyEth({ quantity: '0.1' }));
      expect(quoted.status, quoted.text).toBe(200);
      const executed = await counting.counted(() =>
        request('POST', '/convert_withdraw/execute', { quote_id: quoted.body.message.quote_id }),
      );
      expect(executed.result.status, executed.result.text).toBe(200);
      return executed.calls;
    };
    // Held, so the key item the function keeps for 5 s is the one each request is verified against.
    counting.ctx.clock.hold();
    try {
      const escrowBefore = await balanceOf(ctx, escrow());
      // The first warms the function: the key, the platform account's state.
      await execute();
      expect(await execute()).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
      expect((await balanceOf(ctx, escrow())).minus(escrowBefore).toFixed()).toBe('0.2');
    } finally {
      counting.ctx.clock.reset();
    }
  });

  it('a FAILED custody event returns the quantity and the fee to the participant in a reversing movement; a repeat is a no-op', async () => {
    const feesBefore = await balanceOf(ctx, networkFeeAccount('ETH'));
    const escrowBefore = await balanceOf(ctx, escrow());
    const { message } = await executeOneEth();

    const reply = await custodyEventHandler({ withdrawal_request_id: message.withdrawal_request_id, status: 'FAILED' });
    expect(reply).toMatchObject({ result: 'applied', withdrawal: { status: 'FAILED', transaction_hash: null } });
    const after = await balances(platform);
    // The EUR stays spent on the trade; what it bought, fee included, is back in the participant's account.
    expect(after[`${platform.participantCode}/general/ETH`]).toBe(ETH('1.002'));
    expect((await balanceOf(ctx, escrow())).eq(escrowBefore)).toBe(true);
    expect((await balanceOf(ctx, networkFeeAccount('ETH'))).eq(feesBefore)).toBe(true);

    expect(
      await custodyEventHandler({ withdrawal_request_id: message.withdrawal_request_id, status: 'FAILED' }),
    ).toMatchObject({ result: 'noop' });
    expect(
      await custodyEventHandler({
        withdrawal_request_id: message.withdrawal_request_id,
        status: 'CONFIRMED',
        transaction_hash: '0xabc',
      }),
    ).toEqual({
      result: 'rejected',
      errors: ["status: the withdrawal is already FAILED; it can't become CONFIRMED"],
    });
    expect(await balances(platform)).toEqual(after);
  });

  it('CONFIRMED (ops CLI) needs a transaction hash, releases the escrow to the external boundary, and is applied once', async () => {
    const boundaryBefore = await balanceOf(ctx, onChainBoundaryAccount('ETH'));
    const escrowBefore = await balanceOf(ctx, escrow());
    const { message } = await executeOneEth();
    const id = message.withdrawal_request_id;

    await expect(
      runAdmin(['withdrawal', 'event', '--id', id, '--status', 'CONFIRMED', '--reason', 'test'], { ctx }),
    ).rejects.toThrow(ValidationError);
    const confirmed = await runAdmin(
      ['withdrawal', 'event', '--id', id, '--status', 'CONFIRMED', '--transaction-hash', '0xfeed', '--reason', 'test'],
      { ctx },
    );
    expect(confirmed).toMatchObject({
      outcome: 'applied',
      withdrawal: { status: 'CONFIRMED', transaction_hash: '0xfeed' },
    });
    expect((await balanceOf(ctx, escrow())).eq(escrowBefore)).toBe(true);
    expect((await balanceOf(ctx, onChainBoundaryAccount('ETH'))).minus(boundaryBefore).toFixed()).toBe('1');

    const repeat = await runAdmin(
      ['withdrawal', 'event', '--id', id, '--status', 'CONFIRMED', '--transaction-hash', '0xfeed', '--reason', 'test'],
      { ctx },
    );
    expect(repeat).toMatchObject({ outcome: 'noop' });
    expect((await balanceOf(ctx, onChainBoundaryAccount('ETH'))).minus(boundaryBefore).toFixed()).toBe('1');
    expect(await custodyEventHandler({ withdrawal_request_id: id, status: 'FAILED' })).toMatchObject({
      result: 'rejected',
    });
    expect(await custodyEventHandler({ withdrawal_request_id: 'nope', status: 'FAILED' })).toEqual({
      result: 'rejected',
      errors: ['withdrawal_request_id: withdrawal request not found: nope'],
    });
    expect(await custodyEventHandler({ withdrawal_request_id: 'x'.repeat(3000), status: 'FAILED' })).toEqual({
      result: 'rejected',
      errors: ['withdrawal_request_id: at most 100 characters'],
    });
    expect(await custodyEventHandler({ status: 7 })).toEqual({
      result: 'rejected',
      errors: ['withdrawal_request_id: must be a non-empty string', 'status: must be a non-empty string'],
    });
    for (const transaction_hash of ['', 'f'.repeat(201), 42])
      expect(
        await custodyEventHandler({ withdrawal_request_id: 'nope', status: 'CONFIRMED', transaction_hash }),
      ).toEqual({
        result: 'rejected',
        errors: ['transaction_hash: must be a non-empty string of at most 200 characters'],
      });
  });

  it('executes for a customer from the customer’s account, and refuses one who cannot pay with 400, moving nothing', async () => {
    const [customer] = await customersViaHttp(platform, 1);
    const poor = await quote(platform, buyEth({ quantity: '1', participant_code: customer! }));
    expect(poor.obo_participant).toEqual({
      participant_code: customer,
      account_group: platform.platformCode,
      account_label: 'general',
    });
    const before = await balances(platform);
    const refused = await platform.post('/convert_withdraw/execute', { quote_id: poor.quote_id });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatch(/insufficient EUR balance/);
    expect(await balances(platform)).toEqual(before);

    await fund(customer!, 'EUR', '2505');
    // The refused execution left the quote open, so it can still be executed.
    const executed = await platform.post('/convert_withdraw/execute', { quote_id: poor.quote_id });
    expect(executed.status, executed.text).toBe(200);
    expect((await balances(platform))[`${customer}/general/EUR`]).toBe('0.00');
    expect((await getWithdrawal(ctx, executed.body.message.withdrawal_request_id))?.participant_code).toBe(customer);
  });

  it('refuses an expired quote, another platform’s quote and a liquidity quote', async () => {
    const expiring = await quote(platform, buyEth({ quantity: '0.1' }));
    ctx.clock.advance(31_000);
    const expired = await platform.post('/convert_withdraw/execute', { quote_id: expiring.quote_id });
    expect(expired.status).toBe(400);
    expect(expired.body.errors).toEqual(['quote_id: quote has expired']);
    ctx.clock.reset();

    const theirs = await quote(await newPlatform(), buyEth({ quantity: '0.1' }));
    expect((await platform.post('/convert_withdraw/execute', { quote_id: theirs.quote_id })).status).toBe(404);

    const liquidity = await platform.get(
      `/liquidity/rfq?${new URLSearchParams({ side: 'buy', underlying: 'ETH', quoted_currency: 'EUR', quantity: '0.1' })}`,
    );
    expect(liquidity.status).toBe(200);
    expect(
      (await platform.post('/convert_withdraw/execute', { quote_id: liquidity.body.message.quote_id })).status,
    ).toBe(404);
    // And the other way round: a convert quote is not a liquidity quote. Another quantity than the first quote's:
    // the same GET signed in the same second would be refused as a replay.
    const convert = await quote(platform, buyEth({ quantity: '0.2' }));
    expect((await platform.post('/liquidity/execute', { quote_id: convert.quote_id })).status).toBe(404);
    expect(new Money(convert.total_notional).gt(convert.asset_cost_notional)).toBe(true);
  });
});

describe('events of a convert-withdraw', () => {
  it('tell of the trade, of the withdrawal request created PENDING and of its custody outcome, without the address', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    await fund(platform.participantCode, 'EUR', '3000');
    const quoted = await quote(platform, buyEth({ quantity: '1' }));
    const executed = await platform.post('/convert_withdraw/execute', { quote_id: quoted.quote_id });
    expect(executed.status, executed.text).toBe(200);
    const { trade_id: tradeId, withdrawal_request_id: withdrawalId } = executed.body.message;
    expect(
      await custodyEventHandler({
        withdrawal_request_id: withdrawalId,
        status: 'CONFIRMED',
        transaction_hash: '0xbeef',
      }),
    ).toMatchObject({ result: 'applied' });
    // A redelivered outcome is no change, and no event.
    expect(
      await custodyEventHandler({
        withdrawal_request_id: withdrawalId,
        status: 'CONFIRMED',
        transaction_hash: '0xbeef',
      }),
    ).toMatchObject({ result: 'noop' });

    const [trade] = await capture.received(subscription, (event) => event.type === 'trade.status_changed', 1);
    expect(trade).toMatchObject({
      resource: { type: 'trade', id: tradeId },
      sequence: 1,
      previous_status: null,
      data: { trade_state: 'terminated' },
    });
    const withdrawals = await capture.received(subscription, (event) => event.type === 'withdrawal.status_changed', 2);
    expect(
      withdrawals.map((event) => [event.sequence, event.previous_status, event.data.status, event.data.transaction_id]),
    ).toEqual([
      [1, null, 'PENDING', null],
      [2, 'PENDING', 'CONFIRMED', '0xbeef'],
    ]);
    for (const event of withdrawals) expect(event.resource).toEqual({ type: 'withdrawal', id: withdrawalId });
    // The request as GET /withdrawals/requests/{id} shows it, less the participant's address.
    const { withdrawal_address: address, ...shown } = (await platform.get(`/withdrawals/requests/${withdrawalId}`)).body
      .message[0];
    expect(address).toBe(ETH_ADDRESS);
    expect(withdrawals[1]!.data).toEqual(shown);
    expect(subscription.receiver.received.map((entry) => entry.body.toLowerCase()).join('\n')).not.toContain(
      ETH_ADDRESS.toLowerCase(),
    );
  });
});
