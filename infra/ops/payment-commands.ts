import { applyBankEvent } from '../../lib/payments/apply-bank-event.js';
import { required, type Commands } from './command.js';

/** Bank events by hand: locally there is no bank, and on AWS ops can replay one the integration missed. */
export const paymentCommands: Commands = {
  'payment event': {
    usage: 'payment event --transaction-id ID --status submitted|pending|posted|failed|reversed',
    options: { 'transaction-id': { type: 'string', required: true }, status: { type: 'string', required: true } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const event = { transaction_id: required(flags, 'transaction-id'), status: required(flags, 'status') };
      // The operator's record goes into the transaction that moves the payment (and its money), if one does.
      const result = await applyBankEvent(ctx, event, { alongWith: [audit.item({ ...event })] });
      if (result.outcome === 'noop') await audit.record({ ...event, outcome: 'noop' });
      return result;
    },
  },
};
