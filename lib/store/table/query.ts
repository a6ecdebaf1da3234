import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AppContext } from '../../context.js';

/** Every item a query matches, following DynamoDB's pages (1 MB each) to the end. */
export async function queryAll(
  ctx: Pick<AppContext, 'db'>,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await ctx.db.send(new QueryCommand({ ...input, ExclusiveStartKey }));
    items.push(...(out.Items ?? []));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}
