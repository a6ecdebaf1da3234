import * as z from 'zod/mini';
import { described, epochMs, pageOf, signedAmount } from './common.js';

/** What a movement did to one of the platform's (or its customers') accounts. */
const movementChangeSchema = z
  .object({
    account_id: described(z.string(), 'Stable id of the account (GET /accounts/{account_id}).'),
    account_owner: described(z.string(), 'Participant code of the holder.'),
    account_group: z.string(),
    account_label: z.string(),
    asset: z.string(),
    change: signedAmount("Signed change at the asset's precision: negative debits the account."),
  })
  .check(z.meta({ id: 'MovementChange' }));

const movementSchema = z
  .object({
    movement_id: z.string(),
    movement_timestamp: epochMs('Booked'),
    movement_type: described(
      z.string(),
      'deposit, transfer, trade, reward, award_fund, award_escrow, award_distribution, withdrawal, withdrawal_reversal, settlement, payment.',
    ),
    reference: described(z.string(), 'What caused it, e.g. `transfer:<id>` or `trade:<trade_id>`.'),
    changes: described(
      z.array(movementChangeSchema),
      "The changes on the platform's own and its customers' accounts; the outside world's side is not shown.",
    ),
  })
  .check(z.meta({ id: 'Movement' }));

const accountMovementSchema = z
  .object({
    movement_id: z.string(),
    movement_timestamp: epochMs('Booked'),
    movement_type: z.string(),
    reference: z.string(),
    account_id: z.string(),
    asset: z.string(),
    change: signedAmount("The account's signed change at the asset's precision."),
  })
  .check(z.meta({ id: 'AccountMovement' }));

export const movementListResponse = pageOf(movementSchema);
export const accountMovementListResponse = pageOf(accountMovementSchema);
