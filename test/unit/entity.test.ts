import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { decimal, integer } from '../../lib/store/entity/attributes.js';
import { defineEntity, StoredItemError } from '../../lib/store/entity/entity.js';
import { entityKeys } from '../../lib/store/entity/chart.js';
import { compileTemplate, templateChart } from '../../lib/store/entity/template.js';

const tables = { main: 'main-table', ttl: 'ttl-table' };

const widget = defineEntity({
  type: 'widget',
  table: 'main',
  schema: z.object({
    widget_id: z.string(),
    platform_code: z.string(),
    balance: decimal,
    count: integer,
    due_ms: z.optional(integer),
  }),
  key: { pk: 'WIDGET#{widget_id}', sk: 'WIDGET' },
  indexes: {
    gsi1: { pk: 'PLATFORM#{platform_code}#WIDGETS', sk: '{created_ms:time}#{widget_id}' },
    gsi2: { pk: 'WIDGETS#DUE', sk: '{due_ms:time}#{widget_id}', sparse: true },
  },
  version: 3,
  legacy: [
    { below: 2, defaults: { count: 0 } },
    { below: 3, defaults: (item) => ({ balance: item.count === undefined ? '0' : String(item.count) }) },
  ],
});

describe('key templates', () => {
  it('builds keys, pads numbers to sort as numbers and cuts a prefix at the first part not given', () => {
    const template = compileTemplate('{owner}#{group}#{at:time}#{n:4}');
    expect(template.build({ owner: 'p', group: 'g', at: 42, n: 7 })).toBe('p#g#000000000000042#0007');
    expect(template.prefix({ owner: 'p', group: 'g' })).toBe('p#g#');
    expect(template.prefix({ owner: 'p' })).toBe('p#');
    expect(templateChart('{owner}#{group}#{at:time}#{n:4}')).toBe('<owner>#<group>#<at>#<n>');
    expect(() => template.build({ owner: 'p', group: 'g', at: 42 })).toThrow(/no value for n/);
    expect(() => template.build({ owner: 'p', group: 'g', at: 1.5, n: 1 })).toThrow(/whole number/);
  });
});

describe('an entity', () => {
  it('writes the whole item: key, type, version, every index whose parts are given, numbers as DynamoDB numbers', () => {
    const item = widget.item(
      { widget_id: 'w1', platform_code: 'P1', balance: '12.50', count: 2 },
      { created_ms: 1_700_000_000_000 },
    );
    expect(item).toMatchObject({
      pk: 'WIDGET#w1',
      sk: 'WIDGET',
      type: 'widget',
      item_version: 3,
      gsi1pk: 'PLATFORM#P1#WIDGETS',
      gsi1sk: '001700000000000#w1',
      count: 2,
    });
    expect(item.balance).toBeInstanceOf(NumberValue);
    expect((item.balance as NumberValue).value).toBe('12.50');
    expect(item).not.toHaveProperty('gsi2pk');
    expect(item).not.toHaveProperty('due_ms');
    const due = widget.item(
      { widget_id: 'w1', platform_code: 'P1', balance: '1', count: 0, due_ms: 5 },
      { created_ms: 1 },
    );
    expect(due).toMatchObject({ gsi2pk: 'WIDGETS#DUE', gsi2sk: '000000000000005#w1' });
  });

  it('stamps no type on a TTL-table item: its key prefix says what it is', () => {
    const claim = defineEntity({
      type: 'claim',
      table: 'ttl',
      schema: z.object({ expires_at_ms: integer }),
      key: { pk: 'CLAIM#{id}' },
    });
    expect(claim.item({ expires_at_ms: 5 }, { id: 'c1' })).toEqual({ pk: 'CLAIM#c1', expires_at_ms: 5 });
  });

  it('refuses to write an item missing a part of a non-sparse index, or one its schema refuses', () => {
    expect(() => widget.item({ widget_id: 'w1', platform_code: 'P1', balance: '1', count: 0 })).toThrow(
      /no value for created_ms/,
    );
    expect(() =>
      widget.item({ widget_id: 'w1', platform_code: 'P1', balance: 'one', count: 0 }, { created_ms: 1 }),
    ).toThrow(/widget: not a valid item to write: balance/);
  });

  it('parses what it wrote, decoding DynamoDB numbers read with wrapNumbers', () => {
    const stored = {
      ...widget.item({ widget_id: 'w1', platform_code: 'P1', balance: '12.50', count: 2 }, { created_ms: 1 }),
    };
    stored.count = NumberValue.from('2');
    expect(widget.parse(stored)).toEqual({ widget_id: 'w1', platform_code: 'P1', balance: '12.50', count: 2 });
  });

  it('fills what an older version lacked, and only for that version', () => {
    const v1 = { pk: 'WIDGET#w1', sk: 'WIDGET', widget_id: 'w1', platform_code: 'P1' };
    expect(widget.parse(v1)).toMatchObject({ count: 0, balance: '0' });
    expect(widget.parse({ ...v1, item_version: 2, count: 4 })).toMatchObject({ count: 4, balance: '4' });
    expect(() => widget.parse({ ...v1, item_version: 3 })).toThrow(StoredItemError);
    expect(widget.legacyAttributes(1, v1)).toEqual({ count: 0, balance: '0' });
    expect(widget.legacyAttributes(2, { ...v1, count: 4 })).toEqual({ balance: '4' });
  });

  it('names the entity, the key and the problem when an item does not parse', () => {
    const broken = {
      pk: 'WIDGET#w9',
      sk: 'WIDGET',
      item_version: 3,
      widget_id: 'w9',
      platform_code: 7,
      balance: '1',
      count: 1,
    };
    expect(() => widget.parse(broken)).toThrow('stored widget WIDGET#w9 / WIDGET does not parse: platform_code:');
  });

  it('builds transaction items, queries and index updates on its table and key', () => {
    expect(
      widget.update(
        tables,
        { widget_id: 'w1' },
        { update: 'SET #c = :c', names: { '#c': 'count' }, values: { ':c': 1 } },
      ),
    ).toEqual({
      Update: {
        TableName: 'main-table',
        Key: { pk: 'WIDGET#w1', sk: 'WIDGET' },
        UpdateExpression: 'SET #c = :c',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':c': 1 },
      },
    });
    expect(widget.check(tables, { widget_id: 'w1' }, { condition: 'attribute_exists(pk)' }).ConditionCheck.Key).toEqual(
      {
        pk: 'WIDGET#w1',
        sk: 'WIDGET',
      },
    );
    expect(widget.indexAssignment('gsi2', { due_ms: 9, widget_id: 'w1' })).toEqual({
      expression: '#gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk',
      names: { '#gsi2pk': 'gsi2pk', '#gsi2sk': 'gsi2sk' },
      values: { ':gsi2pk': 'WIDGETS#DUE', ':gsi2sk': '000000000000009#w1' },
    });
    expect(widget.listIndex('gsi1', { platform_code: 'P1' }, { descending: true })).toEqual({
      indexName: 'gsi1',
      partition: { attribute: 'gsi1pk', value: 'PLATFORM#P1#WIDGETS' },
      sortAttribute: 'gsi1sk',
      descending: true,
    });
    expect(widget.query(tables, 'gsi2', 'WIDGETS#DUE', { atMost: '5' })).toMatchObject({
      IndexName: 'gsi2',
      KeyConditionExpression: '#qpk = :qpk AND #qsk <= :qsk',
    });
    expect(entityKeys(widget.definition)).toMatchObject({ pk: 'WIDGET#<widget_id>', sk: 'WIDGET', version: 3 });
  });
});
