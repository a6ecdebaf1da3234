import type { TableDefinition } from '../../../lib/store/table/tables.js';

/** One authorization AWS makes for a call: the action, the resource, and the request's partition keys. */
export interface AwsRequest {
  action: string;
  resource: string;
  /** `dynamodb:LeadingKeys`: every partition key value the request names on that resource. */
  leadingKeys?: string[];
}

type Json = any; // a command's input, marshalled or not (the document client marshals before or after us).

/** What the requests of a DynamoDB call are resolved against: table ARNs and each table's key schema. */
export interface DynamoTables {
  arnOf(table: string): string;
  definitionOf(table: string): TableDefinition | undefined;
}

/**
 * The IAM requests of one DynamoDB call, as DynamoDB authorizes it: each item of a TransactWriteItems as its
 * own action (PutItem, UpdateItem, DeleteItem, ConditionCheckItem) on its table with its partition key, each
 * item of a TransactGetItems as GetItem; a batch as BatchGetItem or BatchWriteItem once per table with the
 * keys it names there; a Query or Scan on the index it reads (`table/<t>/index/<i>`) when it names one.
 */
export function dynamoRequests(commandName: string, input: Json, tables: DynamoTables): AwsRequest[] {
  const operation = commandName.replace(/Command$/, '');
  const on = (action: string, table: string, keys?: Json[]): AwsRequest => ({
    action: `dynamodb:${action}`,
    resource: tables.arnOf(table),
    ...(keys && { leadingKeys: [...new Set(keys.map((key) => partitionValue(key, table, tables)))] }),
  });
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [on(operation, input.TableName, [input.Key])];
    case 'PutItem':
      return [on(operation, input.TableName, [input.Item])];
    case 'TransactWriteItems':
      return (input.TransactItems as Json[]).map((item) => {
        if (item.Put) return on('PutItem', item.Put.TableName, [item.Put.Item]);
        if (item.Update) return on('UpdateItem', item.Update.TableName, [item.Update.Key]);
        if (item.Delete) return on('DeleteItem', item.Delete.TableName, [item.Delete.Key]);
        return on('ConditionCheckItem', item.ConditionCheck.TableName, [item.ConditionCheck.Key]);
      });
    case 'TransactGetItems':
      return (input.TransactItems as Json[]).map((item) => on('GetItem', item.Get.TableName, [item.Get.Key]));
    case 'BatchGetItem':
      return Object.entries(input.RequestItems as Record<string, Json>).map(([table, request]) =>
        on('BatchGetItem', table, request.Keys),
      );
    case 'BatchWriteItem':
      return Object.entries(input.RequestItems as Record<string, Json[]>).map(([table, writes]) =>
        on(
          'BatchWriteItem',
          table,
          writes.map((write) => write.PutRequest?.Item ?? write.DeleteRequest?.Key),
        ),
      );
    case 'Query':
    case 'Scan': {
      const table = tables.arnOf(input.TableName);
      const resource = input.IndexName ? `${table}/index/${input.IndexName}` : table;
      const leading = operation === 'Query' ? queriedPartition(input, tables) : undefined;
      return [{ action: `dynamodb:${operation}`, resource, ...(leading !== undefined && { leadingKeys: [leading] }) }];
    }
    default:
      // DescribeTable and the like: the table itself.
      return [{ action: `dynamodb:${operation}`, resource: tables.arnOf(input.TableName) }];
  }
}

/** A key's partition value as a string, from a plain or a marshalled (`{ S: ... }`) item. */
function partitionValue(key: Json, table: string, tables: DynamoTables): string {
  const name = tables.definitionOf(table)?.partitionKey ?? 'pk';
  return attributeText(key?.[name]);
}

function attributeText(value: Json): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  return String(value.S ?? value.N ?? value.B ?? value.value ?? '');
}

/** The partition key value a Query's key condition names (`#pk = :pk`), on the table or the index it reads. */
function queriedPartition(input: Json, tables: DynamoTables): string | undefined {
  const definition = tables.definitionOf(input.TableName);
  const partitionKey = input.IndexName
    ? definition?.globalIndexes.find((index) => index.name === input.IndexName)?.partitionKey
    : definition?.partitionKey;
  if (!partitionKey || typeof input.KeyConditionExpression !== 'string') return undefined;
  for (const match of input.KeyConditionExpression.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = match[1]!.startsWith('#') ? input.ExpressionAttributeNames?.[match[1]!] : match[1];
    if (name === partitionKey) return attributeText(input.ExpressionAttributeValues?.[match[2]!]);
  }
  return undefined;
}
