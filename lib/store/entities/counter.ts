import * as z from 'zod/mini';
import { integer } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';

/** One shard of a list's counter (lib/store/table/counters.ts): `n`, added to in the transaction of the record it counts. */
export const counterShardEntity = defineEntity({
  type: 'counter',
  table: 'main',
  // Always written (an `ADD`); read as 0 if ever absent, as the readers always have.
  schema: z.object({ n: z.optional(integer) }),
  key: { pk: 'COUNT#{platform_code}#{list}#{bucket}', sk: 'SHARD#{shard}' },
});
