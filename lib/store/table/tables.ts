/**
 * The two tables, defined once. CDK, the local stack and the tests all build them from here.
 *
 * Main table (single-table design): `pk`/`sk` strings, three overloaded GSIs. Key formats live in the entity
 * definitions (`lib/store/entities/`), the only code besides this file that names a key or index attribute's
 * value; the chart generated from them is in `lib/store/README.md`.
 *
 * TTL table: `pk` only. Holds everything with a 72-hour (or shorter) window: client id claims, idempotency
 * records, the signature replay cache. `expires_at_ms` is the authority (conditions compare against it);
 * `ttl` (epoch seconds) only lets DynamoDB clean up, which may happen days late.
 */
export interface TableDefinition {
  partitionKey: string;
  sortKey?: string;
  globalIndexes: { name: string; partitionKey: string; sortKey: string }[];
  ttlAttribute?: string;
  /** A stream of new images (events are dispatched from it). */
  stream?: boolean;
}

export const MAIN_TABLE: TableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  globalIndexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    // Sparse: webhook work falling due (undispatched events, delivery retries), drained by the sweep.
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  ],
  // Events and webhook attempts carry `ttl` (seconds) to be tidied after 30 days; reads compare the stored expiry.
  ttlAttribute: 'ttl',
  // Events are delivered from the table's stream: on AWS a Lambda reads it, locally a poller.
  stream: true,
};

export const TTL_TABLE: TableDefinition = {
  partitionKey: 'pk',
  globalIndexes: [],
  ttlAttribute: 'ttl',
};

/** The CreateTable input for DynamoDB Local and tests (CDK builds its own from the same definitions). */
export function createTableInput(tableName: string, table: TableDefinition) {
  const attributes = new Set<string>([table.partitionKey]);
  if (table.sortKey) attributes.add(table.sortKey);
  for (const index of table.globalIndexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: table.partitionKey, KeyType: 'HASH' as const },
      ...(table.sortKey ? [{ AttributeName: table.sortKey, KeyType: 'RANGE' as const }] : []),
    ],
    ...(table.stream && {
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' as const },
    }),
    ...(table.globalIndexes.length > 0 && {
      GlobalSecondaryIndexes: table.globalIndexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'ALL' as const },
      })),
    }),
  };
}
