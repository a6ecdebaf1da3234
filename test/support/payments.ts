import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { AppContext } from '../../lib/context.js';
import { achClearingAccount } from '../../lib/domain/ach-clearing.js';
import type { AchTransferType } from '../../lib/domain/payments.js';
import { newId } from '../../lib/store/codes.js';
import { paymentCreationItem } from '../../lib/store/payments.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import type { TestPlatform } from './service.js';

/**
 * Stores a submitted ACH payment on the platform's clearing account, funded by inbound reference, as an ACH
 * execution leaves it (without the trade): what bank events then walk. Returns its transaction id.
 */
export async function storeSubmittedPayment(
  ctx: AppContext,
  platform: { platformCode: string; participantCode: string },
  payment: { amount: string; transferType?: AchTransferType; reference: string },
): Promise<string> {
  const transactionId = newId();
  const nowMs = ctx.clock.nowMs();
  await transactWrite(ctx, [
    paymentCreationItem(ctx, {
      transaction_id: transactionId,
      platform_code: platform.platformCode,
      trade_id: null,
      participant_code: platform.participantCode,
      asset: 'USD',
      amount: payment.amount,
      trade_amount: payment.amount,
      status: 'submitted',
      transfer_type: payment.transferType ?? 'debit',
      bank_transfer_id: transactionId,
      funding: 'inbound_reference',
      external_account_id: null,
      description: null,
      bank_fee: null,
      inbound_reference_id: payment.reference,
      clearing_account: achClearingAccount({
        platform_code: platform.platformCode,
        participant_code: platform.participantCode,
      }).account,
      created_at_ms: nowMs,
      updated_at_ms: nowMs,
    }),
  ]);
  return transactionId;
}

/** Funding details of an ACH execution (a new external account each time); fields overridable. */
export const achFunding = (overrides: Record<string, unknown> = {}) => ({
  external_account_id: randomUUID(),
  description: 'LTC ORDER',
  bank_fee: '1.50',
  ...overrides,
});

/**
 * Buys LTC with USD through the API, funded by ACH (quote, then execute with funding details): the trade and
 * its payment, submitted. `params` are the quote's (`total`, `quantity`, `participant_code`). LTC/USD must be
 * priced by the calling file.
 */
export async function achBuy(platform: TestPlatform, params: Record<string, string> = { total: '100' }) {
  const query = new URLSearchParams({ underlying: 'LTC', quoted_currency: 'USD', side: 'buy', ...params }).toString();
  const quote = await platform.get(`/liquidity/rfq?${query}`);
  expect(quote.status, quote.text).toBe(200);
  const executed = await platform.post('/liquidity/execute', {
    quote_id: quote.body.message.quote_id,
    funding_details: achFunding(),
  });
  expect(executed.status, executed.text).toBe(200);
  const listed = await platform.get(`/payments/status?trade_id=${executed.body.message.trade_id}`);
  return {
    trade_id: executed.body.message.trade_id as string,
    transaction_id: listed.body.message[0].transaction_id as string,
  };
}
