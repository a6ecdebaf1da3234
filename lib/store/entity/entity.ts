import type {
  DeleteCommandInput,
  GetCommandInput,
  PutCommandInput,
  QueryCommandInput,
  UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
// The error class by name: `z.core.$ZodError` would keep the whole of zod's core (every locale) in a bundle.
import { $ZodError } from 'zod/v4/core';
import type { Tables } from '../../context.js';
import type { ListIndex } from '../table/paging.js';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../table/tables.js';
import { compileTemplate, type CompiledTemplate, type PartsOf } from './template.js';

/**
 * An entity: one kind of stored item, defined once (the idea of ElectroDB, in our own small code). Its
 * definition holds the item's schema, its key and index composition as templates, its version and what older
 * versions lacked; from it come the key, the whole item (type, version and index attributes stamped), the
 * transaction items that write it, and the parse of an item read back. Store modules keep only the access
 * patterns: which items a read or a transaction holds. Nothing else spells a key or index attribute.
 */

type IndexName = 'gsi1' | 'gsi2' | 'gsi3';

/** An index's key templates. A sparse index is written only when every part is given (a trade while open). */
export interface IndexTemplates {
  readonly pk: string;
  readonly sk: string;
  readonly sparse?: boolean;
}

/**
 * What items written before version `below` may lack, and the value each absent attribute meant then (as
 * stored; a function when it depends on the item, e.g. a trade's reporter): the parse fills them in, and the
 * item-version migration writes them (`legacyAttributes`).
 */
export interface LegacyShape {
  readonly below: number;
  readonly defaults:
    | Readonly<Record<string, unknown>>
    | ((item: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>);
}

type Schema = z.ZodMiniObject;

export interface EntityDefinition<
  S extends Schema,
  PK extends string,
  SK extends string,
  I extends Partial<Record<IndexName, IndexTemplates>>,
> {
  /** The stored `type` attribute; also the entity's name in errors and the chart. */
  readonly type: string;
  readonly table: 'main' | 'ttl';
  /** The attributes besides the key, type, version and index attributes (those the definition stamps). */
  readonly schema: S;
  readonly key: { readonly pk: PK; readonly sk?: SK };
  readonly indexes?: I;
  /** The current item version, stamped as `item_version` on every item written whole. */
  readonly version?: number;
  readonly legacy?: readonly LegacyShape[];
}

/** An update's expressions, besides the table and key the entity supplies. */
export interface UpdateExpressions {
  readonly update: string;
  readonly condition?: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
}

/** A condition (for a check, a put or a delete). */
export interface ConditionExpressions {
  readonly condition: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
}

/** A fragment of an update expression that sets or removes an index's attributes (`SET ${set}`). */
export interface IndexAssignment {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/** A stored item that does not parse as its entity: the entity, the key and what is wrong, where it was read. */
export class StoredItemError extends Error {
  override readonly name = 'StoredItemError';
  constructor(
    readonly entity: string,
    readonly key: string,
    readonly problems: readonly string[],
  ) {
    super(`stored ${entity} ${key} does not parse: ${problems.join('; ')}`);
  }
}

type KeyParts<PK extends string, SK extends string> = PartsOf<PK> & PartsOf<SK>;
type IndexParts<T> = T extends IndexTemplates ? PartsOf<T['pk']> & PartsOf<T['sk']> : never;
type IndexPartitionParts<T> = T extends IndexTemplates ? PartsOf<T['pk']> : never;

/** A whole item as written: attributes and the key, type, version and index attributes. */
export type StoredItem = Record<string, unknown>;

/** How a key or sort range is matched in a Query. */
export type SortCondition = { beginsWith: string } | { between: [string, string] } | { atMost: string };

export interface Entity<
  S extends Schema,
  PK extends string,
  SK extends string,
  I extends Partial<Record<IndexName, IndexTemplates>>,
> {
  readonly type: string;
  readonly table: 'main' | 'ttl';
  readonly version: number | undefined;
  readonly schema: S;
  /** The item's primary key. */
  key(parts: KeyParts<PK, SK>): Record<string, string>;
  /** The partition key alone (a Query of every item sharing it). */
  partitionKey(parts: PartsOf<PK>): string;
  /** The sort key up to the first part not given: a `begins_with` over those given. */
  sortKeyPrefix(parts: Partial<PartsOf<SK>>): string;
  /**
   * The whole item: `value` encoded by the schema, with the key, type, version and each index whose parts
   * are given (every non-sparse one must be). Parts come from `value`, then `extra` (parts not stored).
   */
  item(value: z.output<S>, extra?: Readonly<Record<string, unknown>>): StoredItem;
  /** The attributes of `value` as stored (encoded), without key, type or indexes: for an update's values. */
  encode(value: Partial<z.output<S>>): StoredItem;
  /** The item read back, checked and decoded; an item of an older version has its legacy attributes filled. */
  parse(item: Readonly<Record<string, unknown>>): z.output<S>;
  put(
    tables: Tables,
    value: z.output<S>,
    options?: Partial<ConditionExpressions> & { extra?: Readonly<Record<string, unknown>> },
  ): { Put: PutCommandInput & { Item: StoredItem } };
  update(
    tables: Tables,
    parts: KeyParts<PK, SK>,
    expressions: UpdateExpressions,
  ): { Update: UpdateCommandInput & { UpdateExpression: string } };
  check(
    tables: Tables,
    parts: KeyParts<PK, SK>,
    expressions: ConditionExpressions,
  ): { ConditionCheck: UpdateCommandInput & { ConditionExpression: string } };
  delete(tables: Tables, parts: KeyParts<PK, SK>, expressions?: ConditionExpressions): { Delete: DeleteCommandInput };
  get(tables: Tables, parts: KeyParts<PK, SK>, options?: { consistent?: boolean }): GetCommandInput;
  /** A Query of one index partition (or of the table's, `table`), optionally over a sort range. */
  query(
    tables: Tables,
    index: IndexName | 'table',
    partition: string,
    sort?: SortCondition,
  ): Omit<QueryCommandInput, 'ExclusiveStartKey'>;
  /** An index partition's value (a list's platform partition, a shard of open trades). */
  indexPartition<N extends keyof I & IndexName>(index: N, parts: IndexPartitionParts<I[N]>): string;
  /** An index's sort key, every part given. */
  indexSortKey<N extends keyof I & IndexName>(index: N, parts: IndexParts<I[N]>): string;
  /** An index's sort key up to the first part not given. */
  indexSortPrefix<N extends keyof I & IndexName>(index: N, parts: Partial<IndexParts<I[N]>>): string;
  /** A list on one index partition (lib/store/table/paging.ts). */
  listIndex<N extends keyof I & IndexName>(
    index: N,
    parts: IndexPartitionParts<I[N]>,
    options: Omit<ListIndex, 'indexName' | 'partition' | 'sortAttribute'>,
  ): ListIndex;
  /** `SET` of an index's attributes in an update (a trade entering the open index). */
  indexAssignment<N extends keyof I & IndexName>(index: N, parts: IndexParts<I[N]>): IndexAssignment;
  /** `REMOVE` of an index's attributes in an update (a trade leaving the open index). */
  indexRemoval<N extends keyof I & IndexName>(index: N): Omit<IndexAssignment, 'values'>;
  /** What an item of `version` may lack, and what each meant (for the parse and the item-version migration). */
  legacyAttributes(version: number, item: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>>;
  /** What it was defined with: the store chart draws its keys and indexes from it (`entityKeys`, chart.ts). */
  readonly definition: EntityDefinition<S, PK, SK, I>;
}

export interface EntityChart extends EntityKeys {
  /** What the item is, in one line (kept in the chart's list, lib/store/entities/index.ts, not in the bundles). */
  description: string;
}

export interface EntityKeys {
  type: string;
  table: 'main' | 'ttl';
  pk: string;
  sk: string | undefined;
  indexes: { name: string; pk: string; sk: string; sparse: boolean }[];
  version: number | undefined;
}

function tableOf(table: 'main' | 'ttl'): TableDefinition {
  return table === 'main' ? MAIN_TABLE : TTL_TABLE;
}

/** A zod error's issues as `path: message` lines. */
function problemsOf(error: unknown): string[] {
  if (error instanceof $ZodError)
    return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(item)'}: ${issue.message}`);
  return [error instanceof Error ? error.message : String(error)];
}

export function defineEntity<
  S extends Schema,
  PK extends string,
  SK extends string = never,
  I extends Partial<Record<IndexName, IndexTemplates>> = Record<never, IndexTemplates>,
>(definition: EntityDefinition<S, PK, SK, I>): Entity<S, PK, SK, I> {
  const table = tableOf(definition.table);
  const pkTemplate = compileTemplate(definition.key.pk);
  const skTemplate = definition.key.sk === undefined ? undefined : compileTemplate(definition.key.sk);
  if ((skTemplate === undefined) !== (table.sortKey === undefined))
    throw new Error(`entity ${definition.type}: its table ${table.sortKey ? 'has' : 'has no'} sort key`);
  const indexes = new Map<
    string,
    { pk: CompiledTemplate; sk: CompiledTemplate; sparse: boolean; attributes: { pk: string; sk: string } }
  >();
  for (const [name, templates] of Object.entries(definition.indexes ?? {}) as [string, IndexTemplates][]) {
    const declared = table.globalIndexes.find((index) => index.name === name);
    if (!declared) throw new Error(`entity ${definition.type}: the table has no index ${name}`);
    indexes.set(name, {
      pk: compileTemplate(templates.pk),
      sk: compileTemplate(templates.sk),
      sparse: templates.sparse === true,
      attributes: { pk: declared.partitionKey, sk: declared.sortKey },
    });
  }
  const indexOf = (name: string) => {
    const index = indexes.get(name);
    if (!index) throw new Error(`entity ${definition.type} has no index ${name}`);
    return index;
  };
  const keyOf = (parts: Readonly<Record<string, unknown>>): Record<string, string> => ({
    [table.partitionKey]: pkTemplate.build(parts),
    ...(skTemplate && { [table.sortKey!]: skTemplate.build(parts) }),
  });
  const keyText = (item: Readonly<Record<string, unknown>>) =>
    [item[table.partitionKey], ...(table.sortKey ? [item[table.sortKey]] : [])].map(String).join(' / ');
  const tableName = (tables: Tables) => (definition.table === 'main' ? tables.main : tables.ttl);
  const expressionFields = (expressions: Partial<ConditionExpressions> | undefined) => ({
    ...(expressions?.condition !== undefined && { ConditionExpression: expressions.condition }),
    ...(expressions?.names &&
      Object.keys(expressions.names).length > 0 && {
        ExpressionAttributeNames: expressions.names,
      }),
    ...(expressions?.values &&
      Object.keys(expressions.values).length > 0 && {
        ExpressionAttributeValues: expressions.values,
      }),
  });
  const encode = (value: Readonly<Record<string, unknown>>, partial: boolean): StoredItem => {
    // Typed by the callers (`item`, `encode`); here the schema is any object schema.
    const schema: z.ZodMiniType = partial ? z.partial(definition.schema) : definition.schema;
    try {
      const encoded = z.encode(schema, value) as StoredItem;
      // Absent optional attributes are left out, never written as undefined.
      for (const name of Object.keys(encoded)) if (encoded[name] === undefined) delete encoded[name];
      return encoded;
    } catch (error) {
      throw new Error(`entity ${definition.type}: not a valid item to write: ${problemsOf(error).join('; ')}`);
    }
  };
  const legacyAttributes = (version: number, item: Readonly<Record<string, unknown>>): Record<string, unknown> =>
    Object.assign(
      {},
      ...(definition.legacy ?? [])
        .filter((shape) => version < shape.below)
        .map((shape) => (typeof shape.defaults === 'function' ? shape.defaults(item) : shape.defaults)),
    );

  const entity: Entity<S, PK, SK, I> = {
    type: definition.type,
    table: definition.table,
    version: definition.version,
    schema: definition.schema,
    key: (parts) => keyOf(parts),
    partitionKey: (parts) => pkTemplate.build(parts),
    sortKeyPrefix: (parts) => {
      if (!skTemplate) throw new Error(`entity ${definition.type} has no sort key`);
      return skTemplate.prefix(parts);
    },
    item(value, extra) {
      const parts = { ...value, ...extra };
      const item: StoredItem = {
        ...keyOf(parts),
        // The main table's items say what they are (its partitions mix entities; scans and the stream branch on
        // it); a TTL-table item's key prefix does, and every byte there is paid on every request's claim.
        ...(definition.table === 'main' && { type: definition.type }),
        ...(definition.version !== undefined && { item_version: definition.version }),
      };
      for (const [name, index] of indexes) {
        const complete = index.pk.complete(parts) && index.sk.complete(parts);
        if (!complete && index.sparse) continue;
        item[index.attributes.pk] = index.pk.build(parts);
        item[index.attributes.sk] = index.sk.build(parts);
        if (!complete) throw new Error(`entity ${definition.type}: index ${name} is incomplete`);
      }
      return { ...encode(value, false), ...item };
    },
    encode: (value) => encode(value, true),
    parse(item) {
      const version = item.item_version === undefined ? 1 : Number(String(item.item_version));
      const legacy = Object.entries(legacyAttributes(version, item)).filter(([name]) => item[name] === undefined);
      const source = legacy.length === 0 ? item : { ...Object.fromEntries(legacy), ...item };
      try {
        return z.decode(definition.schema, source as z.input<S>);
      } catch (error) {
        throw new StoredItemError(definition.type, keyText(item), problemsOf(error));
      }
    },
    put: (tables, value, options) => ({
      Put: {
        TableName: tableName(tables),
        Item: entity.item(value, options?.extra),
        ...expressionFields(options),
      },
    }),
    update: (tables, parts, expressions) => ({
      Update: {
        TableName: tableName(tables),
        Key: keyOf(parts),
        UpdateExpression: expressions.update,
        ...expressionFields(expressions),
      },
    }),
    check: (tables, parts, expressions) => ({
      ConditionCheck: {
        TableName: tableName(tables),
        Key: keyOf(parts),
        ConditionExpression: expressions.condition,
        ...expressionFields(expressions),
      },
    }),
    delete: (tables, parts, expressions) => ({
      Delete: { TableName: tableName(tables), Key: keyOf(parts), ...expressionFields(expressions) },
    }),
    get: (tables, parts, options) => ({
      TableName: tableName(tables),
      Key: keyOf(parts),
      ...(options?.consistent && { ConsistentRead: true }),
    }),
    query(tables, index, partition, sort) {
      const attributes =
        index === 'table' ? { pk: table.partitionKey, sk: table.sortKey ?? '' } : indexOf(index).attributes;
      const names: Record<string, string> = { '#qpk': attributes.pk };
      const values: Record<string, unknown> = { ':qpk': partition };
      let condition = '#qpk = :qpk';
      if (sort) {
        names['#qsk'] = attributes.sk;
        if ('beginsWith' in sort) {
          condition += ' AND begins_with(#qsk, :qsk)';
          values[':qsk'] = sort.beginsWith;
        } else if ('between' in sort) {
          condition += ' AND #qsk BETWEEN :qfrom AND :qto';
          values[':qfrom'] = sort.between[0];
          values[':qto'] = sort.between[1];
        } else {
          condition += ' AND #qsk <= :qsk';
          values[':qsk'] = sort.atMost;
        }
      }
      return {
        TableName: tableName(tables),
        ...(index !== 'table' && { IndexName: index }),
        KeyConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      };
    },
    indexPartition: (index, parts) => indexOf(index).pk.build(parts),
    indexSortKey: (index, parts) => indexOf(index).sk.build(parts),
    indexSortPrefix: (index, parts) => indexOf(index).sk.prefix(parts),
    listIndex: (index, parts, options) => ({
      indexName: index,
      partition: { attribute: indexOf(index).attributes.pk, value: indexOf(index).pk.build(parts) },
      sortAttribute: indexOf(index).attributes.sk,
      ...options,
    }),
    indexAssignment(index, parts) {
      const { pk, sk, attributes } = indexOf(index);
      return {
        expression: `#${index}pk = :${index}pk, #${index}sk = :${index}sk`,
        names: { [`#${index}pk`]: attributes.pk, [`#${index}sk`]: attributes.sk },
        values: { [`:${index}pk`]: pk.build(parts), [`:${index}sk`]: sk.build(parts) },
      };
    },
    indexRemoval(index) {
      const { attributes } = indexOf(index);
      return {
        expression: `#${index}pk, #${index}sk`,
        names: { [`#${index}pk`]: attributes.pk, [`#${index}sk`]: attributes.sk },
      };
    },
    legacyAttributes,
    definition,
  };
  return entity;
}
