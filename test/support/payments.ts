import type { AppContext } from '../../lib/context.js';
import { achClearingAccount } from '../../lib/domain/ach-clearing.js';
import type { AchTransferType } from '../../lib/domain/payments.js';
import { newId } from '../../lib/store/codes.js';
import { paymentCreationItem } from '../../lib/store/payments.js';
import { transactWrite } from '../../lib/store/transactions.js';

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
      clearing_account: achClearingAccount({ platform_code: platform.platformCode, participant_code: platform.participantCode }).account,
      created_at_ms: nowMs,
      updated_at_ms: nowMs,
    }),
  ]);
  return transactionId;
}
