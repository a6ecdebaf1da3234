import { applyCustodyEvent } from '../../lib/withdrawals/apply-custody-event.js';
import { setNetworkFee } from '../../lib/withdrawals/network-fees.js';
import { optional, required, type Commands } from './command.js';
import { eventQueueUrl, queueEvent } from './event-queue.js';

/** The network fee table, and custody events by hand (locally there is no custodian, applied at
 * once; on AWS, to replay one, sent to the custody events queue when CUSTODY_EVENTS_QUEUE_URL is set). */
export const withdrawalCommands: Commands = {
  'fee set': {
    usage: 'fee set --asset ASSET --quantity QUANTITY',
    options: { asset: { type: 'string', required: true }, quantity: { type: 'string', required: true } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const fee = await setNetworkFee(ctx, required(flags, 'asset'), required(flags, 'quantity'));
      await audit.record(fee);
      return fee;
    },
  },
  'withdrawal event': {
    usage: 'withdrawal event --id WITHDRAWAL_REQUEST_ID --status CONFIRMED|FAILED [--transaction-hash HASH]',
    options: {
      id: { type: 'string', required: true },
      status: { type: 'string', required: true },
      'transaction-hash': { type: 'string' },
    },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const event = {
        withdrawal_request_id: required(flags, 'id'),
        status: required(flags, 'status'),
        transaction_hash: optional(flags, 'transaction-hash') ?? null,
      };
      const queueUrl = eventQueueUrl('custody');
      if (queueUrl) {
        const queued = await queueEvent(queueUrl, event.withdrawal_request_id, event);
        await audit.record({ ...event, queued });
        return queued;
      }
      const result = await applyCustodyEvent(ctx, event);
      await audit.record({ ...event, result });
      return result;
    },
  },
};
