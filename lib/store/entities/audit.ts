import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/** What an operator changed by hand, who, and why. Immutable; written with the change where there is one transaction. */
const auditSchema = z.object({
  audit_id: z.string(),
  /** The command as typed (`deposit`, `price set`, ...). */
  command: z.string(),
  operator: z.string(),
  reason: z.string(),
  /** What the command changed (never a secret), as the command gave it (numbers come back as DynamoDB numbers). */
  changes: z.record(z.string(), z.unknown()),
  at: integer,
});

export type AuditEntry = z.output<typeof auditSchema>;

/** An ops command's record, in the one audit log by time. */
export const auditEntity = defineEntity({
  type: 'audit',
  table: 'main',
  schema: auditSchema,
  key: { pk: 'AUDIT#{audit_id}', sk: 'AUDIT' },
  indexes: { gsi1: { pk: 'AUDIT', sk: '{at:time}#{audit_id}' } },
});
