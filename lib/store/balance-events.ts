import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../context.js';
import type { AccountRef, Movement } from '../domain/ledger.js';
import { Money, plain } from '../domain/money.js';
import type { CountChange } from './counters.js';
import { eventItem } from './events.js';
import { readInteger, readMoney } from './numbers.js';
import type { PreparedItems, PrepareRead, TaggedItem, TransactItem } from './transactions.js';

type AccountUpdate = NonNullable<TransactItem['Update']>;

/**
 * `account_balance.changed` (design section 8): one event per platform account a movement touches, with the
 * balance after it, the signed change and the movement. A balance update is blind (`balance + change`), so
 * the balance after it, and the account's change counter that numbers its events, are known only from a
 * read: just before each attempt of the transaction the account is read (strongly consistent), the update is
 * conditioned on the version it read, and the event carries what the update will produce. If another
 * booking changed the account in between, the condition fails, the read is stale, and the transaction is
 * prepared and tried again; if the read was current, the failed condition is the update's own (insufficient
 * funds). System accounts (no platform) have no events and stay blind.
 */
export interface BalanceChange {
  account: AccountRef;
  accountId: string;
  platformCode: string;
  change: Money;
  movement: Movement;
  nowMs: number;
}

export interface BalanceUpdate {
  /** The account's update, without a condition. */
  update: AccountUpdate;
  /** A debit that must be covered: `balance >= :amount` (the update's values hold `:amount`). */
  guard?: { onConditionFailed: () => Error };
  /** Counters moved when the update opens the account. */
  openingCounts: readonly CountChange[];
}

export function withBalanceEvent(ctx: AppContext, spec: BalanceUpdate, change: BalanceChange): TaggedItem {
  const { update, guard } = spec;
  // The read a stale check makes on its own; the attempt's read goes with the other prepared items' (`PrepareRead`).
  const readAlone = async () => (await ctx.db.send(new GetCommand({ TableName: update.TableName, Key: update.Key, ConsistentRead: true }))).Item;
  // -1: no account yet; 0: an account written before accounts carried a version.
  const versionOf = (item: Record<string, any> | undefined) => (item ? (item.version === undefined ? 0 : readInteger(item.version)) : -1);

  const prepare = async (read: PrepareRead): Promise<PreparedItems> => {
    const current = await read(update.Key!);
    const version = versionOf(current);
    const nextVersion = Math.max(1, version + 1);
    const exists = current !== undefined;
    const conditions = [
      ...(guard ? ['balance >= :amount'] : []),
      !exists ? 'attribute_not_exists(pk)' : current.version === undefined ? 'attribute_not_exists(version)' : 'version = :readVersion',
    ];
    const prepared: TaggedItem = {
      item: {
        Update: {
          ...update,
          UpdateExpression: addToSet(update.UpdateExpression!, 'version = :nextVersion'),
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeValues: {
            ...update.ExpressionAttributeValues,
            ':nextVersion': nextVersion,
            ...(exists && current.version !== undefined && { ':readVersion': version }),
          },
        },
      },
      onConditionFailed: guard?.onConditionFailed,
      ...(!exists && !guard && { counts: spec.openingCounts }),
    };
    const balanceAfter = (exists ? readMoney(current.balance) : new Money(0)).plus(change.change);
    const event = eventItem(
      ctx,
      {
        type: 'account_balance.changed',
        platformCode: change.platformCode,
        resource: { type: 'account', id: change.accountId },
        sequence: nextVersion,
        data: {
          account_id: change.accountId,
          participant_code: change.account.participant_code,
          account_group: change.account.account_group,
          account_label: change.account.account_label,
          asset: change.account.asset,
          balance: plain(balanceAfter),
          movement: { movement_id: change.movement.movement_id, type: change.movement.type, reference: change.movement.reference, change: plain(change.change) },
          last_update: change.nowMs,
        },
      },
      change.nowMs,
    );
    return {
      items: [prepared, event],
      // After a failed condition: did another booking move (or open) the account since our read?
      stale: async () => versionOf(await readAlone()) !== version,
    };
  };
  return { item: { Update: update }, prepare };
}

/** `SET a = 1 REMOVE b` + `c = 2` -> `SET a = 1, c = 2 REMOVE b`. */
function addToSet(expression: string, assignment: string): string {
  const remove = expression.indexOf(' REMOVE ');
  return remove < 0 ? `${expression}, ${assignment}` : `${expression.slice(0, remove)}, ${assignment}${expression.slice(remove)}`;
}
