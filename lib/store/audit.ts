import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from './codes.js';
import { auditEntity, type AuditEntry } from './entities/audit.js';
import type { TaggedItem } from './table/transaction-items.js';
import type { AppContext } from '../context.js';

export type { AuditEntry };

export function newAuditEntry(fields: Omit<AuditEntry, 'audit_id'>): AuditEntry {
  return { audit_id: newId(), ...fields };
}

export function auditItem(ctx: Pick<AppContext, 'tables'>, entry: AuditEntry): TaggedItem {
  return { item: auditEntity.put(ctx.tables, entry, { condition: 'attribute_not_exists(pk)' }) };
}

export async function recordAudit(ctx: Pick<AppContext, 'db' | 'tables'>, entry: AuditEntry): Promise<void> {
  await ctx.db.send(new PutCommand(auditEntity.put(ctx.tables, entry, { condition: 'attribute_not_exists(pk)' }).Put));
}

/** The audit log from `sinceMs` on, oldest first (at most `limit` entries). */
export async function auditLog(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  sinceMs: number,
  limit = 100,
): Promise<AuditEntry[]> {
  // From the first sort key at `sinceMs` to '~', which sorts after every key (each starts with the time's digits).
  const from = auditEntity.indexSortPrefix('gsi1', { at: sinceMs });
  const out = await ctx.db.send(
    new QueryCommand({
      ...auditEntity.query(ctx.tables, 'gsi1', auditEntity.indexPartition('gsi1', {}), { between: [from, '~'] }),
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => auditEntity.parse(item));
}
