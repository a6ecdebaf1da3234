import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { accountIdOf, accountKey, isUnguarded, type AccountRef } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { bookingLeaseEntity, queuedBookingEntity } from '../../lib/store/entities/booking-queue.js';
import { QUEUE_SHARDS } from '../../lib/ledger/hot-account.js';
import { accountEntity } from '../../lib/store/entities/ledger.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { parseAccount } from '../../lib/store/ledger.js';
import { batchGetItems } from '../../lib/store/table/batch-get.js';
import type { TestPlatform } from './service.js';
import { ctx } from './context.js';

/** Credits a participant's account from outside, as the ops `deposit` command does. */
export async function fund(
  participantCode: string,
  asset: string,
  amount: string,
  accountLabel?: string,
): Promise<void> {
  await deposit(ctx, { reference: randomUUID(), participantCode, asset, amount, accountLabel });
}

/**
 * The balances of many guarded accounts (customers', platforms'), in the order given, each read strongly
 * consistently as `balanceOf` reads it, but 100 to a BatchGetItem: the award tests read hundreds of recipients'
 * balances several times each, one GetItem apiece. An account never credited reads 0.
 */
export async function balancesOf(accounts: readonly AccountRef[]): Promise<Money[]> {
  // The outside world's accounts are sharded: their balance is a sum, which `balanceOf` reads.
  const sharded = accounts.find((account) => isUnguarded(account.participant_code));
  if (sharded) throw new Error(`balancesOf reads guarded accounts only, not ${accountKey(sharded)}`);
  // BatchGetItem refuses a key named twice.
  const unique = [...new Map(accounts.map((account) => [accountIdOf(account), account])).values()];
  const items = await batchGetItems(
    ctx,
    unique.map((account) => accountEntity.key(account)),
    { consistent: true, what: 'test balances' },
  );
  const byId = new Map(
    items.map((item) => {
      const account = parseAccount(item);
      return [accountIdOf(account), new Money(account.balance)] as const;
    }),
  );
  return accounts.map((account) => byId.get(accountIdOf(account)) ?? new Money(0));
}

/** Balances the platform sees through GET /accounts, keyed `owner/label/asset`. */
export async function balances(platform: TestPlatform, query = ''): Promise<Record<string, string>> {
  const response = await platform.get(`/accounts${query}`);
  if (response.status !== 200) throw new Error(`GET /accounts: ${response.status} ${response.text}`);
  return Object.fromEntries(
    response.body.message.map((account: any) => [
      `${account.account_owner}/${account.account_label}/${account.asset}`,
      account.balance,
    ]),
  );
}

/** The platform's own participant's USD balances in the accounts labelled `labels`, in that order. */
export async function usdBalancesOf(platform: TestPlatform, ...labels: string[]): Promise<(string | undefined)[]> {
  const all = await balances(platform);
  return labels.map((label) => all[`${platform.participantCode}/${label}/USD`]);
}

/** A POST /transfers body moving 1.00 USD between two of the platform's own accounts; fields overridable. */
export function transferBody(platform: TestPlatform, overrides: Record<string, unknown> = {}) {
  return {
    from_participant_code: platform.participantCode,
    from_account_group: platform.platformCode,
    from_account_label: 'general',
    to_participant_code: platform.participantCode,
    to_account_group: platform.platformCode,
    to_account_label: 'savings',
    asset: 'USD',
    amount: '1.00',
    ...overrides,
  };
}

/** The platform's own USD account (`general`): the one its payouts debit. */
export const generalOf = (platform: TestPlatform): AccountRef => ({
  participant_code: platform.participantCode,
  account_group: platform.platformCode,
  account_label: 'general',
  asset: 'USD',
});

/** The account as contention leaves it (hot), with its committer's lease held by a process that stalls. */
export async function hotWithStalledCommitter(account: AccountRef): Promise<void> {
  const farAhead = ctx.clock.nowMs() + 10 * 60_000;
  await ctx.db.send(
    new UpdateCommand({
      TableName: ctx.tables.main,
      Key: accountEntity.key(account),
      UpdateExpression: 'SET hot_until_ms = :until',
      ExpressionAttributeValues: { ':until': farAhead },
    }),
  );
  await ctx.db.send(
    new PutCommand(
      bookingLeaseEntity.put(
        ctx.tables,
        { owner: 'stalled', until_ms: farAhead, ttl: Math.ceil(farAhead / 1000) },
        { extra: { account_key: accountKey(account) } },
      ).Put,
    ),
  );
}

/** The account made hot (its bookings queue), no committer holding its lease: a booking's own process commits it. */
export async function markHot(account: AccountRef): Promise<void> {
  await hotWithStalledCommitter(account);
  await releaseStalledLease(account);
}

/** The stalled committer's lease gone, as when it lapses: the next booking's process takes it. */
export async function releaseStalledLease(account: AccountRef): Promise<void> {
  await ctx.db.send(
    new DeleteCommand({
      TableName: ctx.tables.main,
      Key: bookingLeaseEntity.key({ account_key: accountKey(account) }),
    }),
  );
}

/** Entries in the account's queue (`Q#<booking id>`), over all its shards, read consistently. */
export async function queuedEntries(account: AccountRef): Promise<number> {
  let count = 0;
  for (let shard = 0; shard < QUEUE_SHARDS; shard++) {
    const out = await ctx.db.send(
      new QueryCommand({
        TableName: ctx.tables.main,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :queued)',
        ExpressionAttributeValues: {
          ':pk': queuedBookingEntity.partitionKey({ account_key: accountKey(account), shard }),
          ':queued': 'Q#',
        },
        ConsistentRead: true,
        Select: 'COUNT',
      }),
    );
    count += out.Count ?? 0;
  }
  return count;
}
