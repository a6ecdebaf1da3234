import { applyCustodyEvent } from '../../lib/withdrawals/apply-custody-event.js';
import { setNetworkFee } from '../../lib/withdrawals/network-fees.js';
import { required, type Commands } from './command.js';

/** The network fee table, and custody events by hand (locally there is no custodian; on AWS, to replay one). */
export const withdrawalCommands: Commands = {
  'fee set': {
    usage: 'fee set --asset ASSET --quantity QUANTITY',
    run: (flags) => setNetworkFee(required(flags, 'asset'), required(flags, 'quantity')),
  },
  'withdrawal event': {
    usage: 'withdrawal event --id WITHDRAWAL_REQUEST_ID --status CONFIRMED|FAILED [--transaction-hash HASH]',
    run: (flags) =>
      applyCustodyEvent({ withdrawal_request_id: required(flags, 'id'), status: required(flags, 'status'), transaction_hash: flags['transaction-hash'] ?? null }),
  },
};
