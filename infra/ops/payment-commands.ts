import { applyBankEvent } from '../../lib/payments/apply-bank-event.js';
import { required, type Commands } from './command.js';

/** Bank events by hand: locally there is no bank, and on AWS ops can replay one the integration missed. */
export const paymentCommands: Commands = {
  'payment event': {
    usage: 'payment event --transaction-id ID --status submitted|pending|posted|failed|reversed',
    run: (flags) => applyBankEvent({ transaction_id: required(flags, 'transaction-id'), status: required(flags, 'status') }),
  },
};
