import { applyBankEvent } from '../../lib/payments/apply-bank-event.js';
import { required, type Commands } from './command.js';
import { eventQueueUrl, queueEvent } from './event-queue.js';

/**
 * Bank events by hand: locally there is no bank (applied at once), and on AWS ops can replay one the integration
 * missed (sent to the bank events queue when BANK_EVENTS_QUEUE_URL is set).
 */
export const paymentCommands: Commands = {
  'payment event': {
    usage: 'payment event --transaction-id ID --status submitted|pending|posted|failed|reversed',
    options: { 'transaction-id': { type: 'string', required: true }, status: { type: 'string', required: true } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const event = { transaction_id: required(flags, 'transaction-id'), status: required(flags, 'status') };
      const queueUrl = eventQueueUrl('bank');
      if (queueUrl) {
        // The function applies it later; the record says who sent what, and which message it became.
        const queued = await queueEvent(queueUrl, event.transaction_id, event);
        await audit.record({ ...event, queued });
        return queued;
      }
      // The operator's record goes into the transaction that moves the payment (and its money), if one does.
      const result = await applyBankEvent(ctx, event, { alongWith: [audit.item({ ...event })] });
      if (result.outcome === 'noop') await audit.record({ ...event, outcome: 'noop' });
      return result;
    },
  },
};
