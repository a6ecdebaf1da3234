import * as z from 'zod/mini';
import { integer, text } from '../entity/attributes.js';
import { defineEntity } from '../entity/entity.js';
import { MAIN_TABLE } from '../table/tables.js';

/**
 * A trade and its visibility entries, all in the trade's partition `TRADE#<trade_id>` (its local settlement
 * history is there too: settlement-execution.ts). Amounts stay decimal strings with exactly the asset's
 * decimals: they are never summed in DynamoDB, and the string keeps the precision the trade was reported at.
 */

/** Absent reads as null: the trade's readers have always read these so. */
const orNull = <T extends z.ZodMiniType>(schema: T) => z._default(z.nullable(schema), null);

/**
 * One schema per kind of attribute, shared by every attribute of its kind (`text` in attributes.ts says why):
 * every function that reads or writes a trade builds this module when it is imported (report-trade, the quote
 * executions, settlement): 35 schema objects, from 97 with one per attribute.
 */
const textOrNull = orNull(text);
const timeOrNull = orNull(integer);

const tradeState = z.enum(['accepted', 'active', 'terminated']);
const settlementState = z.nullable(
  z.enum(['obligations_outstanding', 'current_obligations_met', 'counterparty_defaulted', 'settled', 'defaulted']),
);
/** Absent reads as null (a trade's, a party's). */
const settlementStateOrNull = z._default(settlementState, null);

const partySchema = z.object({
  side: z.enum(['buy', 'sell']),
  participant_code: text,
  asset: text,
  amount: text,
  settling: z.boolean(),
  account_label: text,
  liquidity_indicator: orNull(z.enum(['added', 'removed'])),
  client_order_id: textOrNull,
  order_id: textOrNull,
  execution_id: textOrNull,
  account_group: textOrNull,
  settlement_state: settlementStateOrNull,
  obligations_outstanding_timestamp: timeOrNull,
  current_obligations_met_timestamp: timeOrNull,
});

/**
 * The party filters of `GET /trades`, on the trade (the reporter's list entry) and on every visibility entry
 * alike, so a filtered page is one query whichever platform asks. They came with the filtered lists: a trade
 * stored before them lacks them (and no filter on them finds it).
 */
const partyFilters = {
  party_codes: z.optional(z.array(text)),
  account_labels: z.optional(z.array(text)),
};

/** In the order the trade has always been read in (a trade's fields are shown in it). */
const tradeSchema = z.object({
  trade_id: text,
  client_trade_id: text,
  session_id: text,
  trade_reporter: text,
  reporting_party: textOrNull,
  settlement_schedule: textOrNull,
  platform_code: text,
  market_identifier_code: textOrNull,
  symbol: text,
  product_type: z.enum(['spot', 'forward']),
  trade_type: z.enum(['regular', 'block']),
  trade_price: text,
  trade_quantity: text,
  amount_method: z.enum(['price_and_quantity', 'amounts_per_party']),
  physical_delivery: z._default(z.literal(true), true),
  transaction_timestamp: integer,
  comment: textOrNull,
  /** A quote's spread, on the trade its execution made. */
  spread_notional: z.optional(text),
  spread_bps: z.optional(text),
  parties_anonymous: z.boolean(),
  settlement_price_index_id: textOrNull,
  settlement_timestamp: timeOrNull,
  expiry_timestamp: timeOrNull,
  bank_fee: textOrNull,
  contract_size: z._default(z.pipe(integer, z.literal(1)), 1),
  underlying: text,
  quoted_currency: text,
  trade_state: tradeState,
  settlement_state: settlementStateOrNull,
  accepted_timestamp: integer,
  current_obligations_met_timestamp: timeOrNull,
  obligations_outstanding_timestamp: timeOrNull,
  settled_timestamp: timeOrNull,
  defaulted_timestamp: timeOrNull,
  last_update: integer,
  parties: z.tuple([partySchema, partySchema]),
  /** Platforms that may read the trade: the reporter first, then the platforms of the named parties. */
  visible_to: z.array(text),
  /** How many status changes the trade has been through (its creation is 1): its events' `sequence`. */
  status_sequence: integer,
  ...partyFilters,
});

export type StoredTrade = z.output<typeof tradeSchema>;

/** How many partitions the open-trades index is spread over. */
export const OPEN_SHARDS = 8;

/**
 * The trade. gsi1: the trades its reporter sees, by transaction time. gsi2 (sparse) only while not terminated:
 * the open trades, spread over `OPEN_SHARDS` partitions (a burst of reports makes none hot), by when their
 * settlement is next due (`due_ms`, not stored; each state change moves it). Version 2 carries
 * `status_sequence` and `visible_to`; a version 1 trade (reported before status events and cross-platform
 * visibility) has no sequence yet (its creation's events were 1) and is its reporter's alone.
 */
export const tradeEntity = defineEntity({
  type: 'trade',
  table: 'main',
  schema: tradeSchema,
  key: { pk: 'TRADE#{trade_id}', sk: 'TRADE' },
  indexes: {
    gsi1: { pk: 'PLATFORM#{platform_code}#TRADES', sk: '{transaction_timestamp:time}#{trade_id}' },
    gsi2: { pk: 'TRADES#OPEN#{shard}', sk: '{due_ms:time}#{trade_id}', sparse: true },
  },
  version: 2,
  legacy: [{ below: 2, defaults: (item) => ({ status_sequence: 1, visible_to: [item.platform_code] }) }],
});

/**
 * A trade listed for a platform other than its reporter (a party's platform): its entry in that platform's
 * list (ordered by the trade's `transaction_timestamp`, not stored here), carrying what `GET /trades` filters
 * on, as the trade does, and the trade itself, so that list reads no trade apart: every field but
 * `platform_code` (the entry's key names the listing platform there) under its own name, the reporter's
 * platform as `reported_by`. Every change of the trade sets the same fields on its entries in its transaction.
 * An entry written before entries carried the trade has no `reported_by` (nor the fields that never change):
 * the list reads its trade.
 */
export const tradeVisibilityEntity = defineEntity({
  type: 'trade_visibility',
  table: 'main',
  schema: z.extend(z.partial(z.omit(tradeSchema, { platform_code: true })), {
    ...z.pick(tradeSchema, {
      trade_id: true,
      client_trade_id: true,
      reporting_party: true,
      market_identifier_code: true,
      trade_state: true,
      settlement_state: true,
    }).shape,
    platform_code: text,
    reported_by: z.optional(text),
  }),
  key: { pk: 'TRADE#{trade_id}', sk: 'VISIBLE#{platform_code}' },
  indexes: { gsi1: { pk: 'PLATFORM#{platform_code}#TRADES', sk: '{transaction_timestamp:time}#{trade_id}' } },
});

/**
 * The trade a stored visibility entry holds, read as the trade item would be (it is written whole, from a trade
 * of the current version, with the entry or by migration 0003), in one decoding; undefined for an entry from
 * before entries held the trade.
 */
export function tradeOfEntry(item: Readonly<Record<string, unknown>>): StoredTrade | undefined {
  if (item.reported_by === undefined) return undefined;
  return tradeEntity.parse({ ...item, platform_code: item.reported_by, item_version: tradeEntity.version });
}

/**
 * The open-trades index's sort attribute, read with each due trade: a postponement is conditioned on the
 * value read, so it never undoes a state change's own due time.
 */
export const TRADE_DUE_ATTRIBUTE = MAIN_TABLE.globalIndexes.find((index) => index.name === 'gsi2')!.sortKey;
