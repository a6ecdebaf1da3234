import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from './codes.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

/** What an operator changed by hand, who, and why. Immutable; written with the change where there is one transaction. */
export interface AuditEntry {
  audit_id: string;
  /** The command as typed (`deposit`, `price set`, ...). */
  command: string;
  operator: string;
  reason: string;
  /** What the command changed (never a secret). */
  changes: Record<string, unknown>;
  at: number;
}

export function newAuditEntry(fields: Omit<AuditEntry, 'audit_id'>): AuditEntry {
  return { audit_id: newId(), ...fields };
}

export function auditItem(ctx: Pick<AppContext, 'tables'>, entry: AuditEntry): TaggedItem {
  return {
    item: {
      Put: {
        TableName: ctx.tables.main,
        Item: {
          ...keys.audit(entry.audit_id),
          type: 'audit',
          ...entry,
          gsi1pk: keys.auditLog(),
          gsi1sk: keys.auditSortKey(entry.at, entry.audit_id),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

export async function recordAudit(ctx: Pick<AppContext, 'db' | 'tables'>, entry: AuditEntry): Promise<void> {
  await ctx.db.send(new PutCommand({ ...auditItem(ctx, entry).item.Put! }));
}

/** The audit log from `sinceMs` on, oldest first (at most `limit` entries). */
export async function auditLog(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  sinceMs: number,
  limit = 100,
): Promise<AuditEntry[]> {
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: ctx.tables.main,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk >= :from',
      ExpressionAttributeValues: { ':pk': keys.auditLog(), ':from': keys.auditSortKey(sinceMs, '') },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => ({
    audit_id: item.audit_id,
    command: item.command,
    operator: item.operator,
    reason: item.reason,
    changes: item.changes,
    at: readInteger(item.at),
  }));
}
