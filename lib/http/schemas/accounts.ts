import * as z from 'zod/mini';
import { described, epochMs, messageOf, pageOf, signedAmount } from './common.js';

const accountSchema = z
  .object({
    asset: z.string(),
    account_owner: described(z.string(), 'Participant code of the holder.'),
    account_type: z.literal('available'),
    account_group: described(z.string(), "The holder's platform code unless the platform named another group."),
    account_label: described(z.string(), '`general` unless named.'),
    balance: signedAmount(
      "Balance at the asset's precision. Only the platform's ACH clearing account can be negative.",
    ),
    account_id: described(z.string(), 'Stable id of the account.'),
    last_update: epochMs('Last balance change'),
  })
  .check(z.meta({ id: 'Account' }));

export const accountListResponse = pageOf(accountSchema);
export const accountResponse = messageOf(accountSchema);
