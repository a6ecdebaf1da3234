import { randomUUID } from 'node:crypto';
import { achClearingAccount } from '../../lib/domain/ach-clearing.js';
import { parseCustomer } from '../../lib/domain/customers.js';
import { SYSTEM_PARTICIPANTS, systemAccount, type Leg } from '../../lib/domain/ledger.js';
import { Money } from '../../lib/domain/money.js';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { movementItems } from '../../lib/store/ledger.js';
import { createCustomer } from '../../lib/store/participants.js';
import { paymentCreationItem } from '../../lib/store/payments.js';
import { acceptedTrade, tradeItems } from '../../lib/store/trades.js';
import { transactWrite, type TaggedItem } from '../../lib/store/transactions.js';
import { transferRecordItem } from '../../lib/store/transfers.js';
import { expectStatus, newBenchPlatform, type BenchPlatform } from './client.js';
import { adultBody, tradeBody } from './fixtures.js';
import { benchCtx, type DynamoMeter } from './stack.js';
import { inParallel, median } from './stats.js';

/**
 * Issue 13's list scaling: page 1 (page_size=100) of each list at a small and a large history of one
 * platform, seeded through the store's own write functions in parallel batches (not through HTTP).
 */

export const LISTS = ['/transfers', '/trades', '/accounts', '/participants', '/payments/status'] as const;
type List = (typeof LISTS)[number];

const PAGE = { '/transfers': 'page_size=100', '/trades': 'page_size=100', '/accounts': 'page_size=100', '/participants': 'page_size=100', '/payments/status': 'size=100' } as const;

/** Records per transaction when seeding: under the 100-item limit with room for the counters. */
const PER_TRANSACTION = 45;
const SEED_CONCURRENCY = 16;

function batches(count: number): number[] {
  return Array.from({ length: Math.ceil(count / PER_TRANSACTION) }, (_, i) => Math.min(PER_TRANSACTION, count - i * PER_TRANSACTION));
}

async function seedTransfers(platform: BenchPlatform, count: number): Promise<void> {
  const base = Date.now() * 1000;
  await inParallel(batches(count), SEED_CONCURRENCY, async (size, b) => {
    const now = Date.now();
    const items: TaggedItem[] = Array.from({ length: size }, (_, i) =>
      transferRecordItem(
        benchCtx(),
        {
          id: base + b * PER_TRANSACTION + i,
          platform_code: platform.platformCode,
          created_at: new Date(now).toISOString(),
          updated_at: new Date(now).toISOString(),
          status: 'approved',
          from_participant_code: platform.participantCode,
          from_account_group: platform.platformCode,
          from_account_label: 'general',
          to_participant_code: platform.participantCode,
          to_account_group: platform.platformCode,
          to_account_label: 'savings',
          asset: 'USD',
          amount: '1.00',
          movement_id: randomUUID(),
          client_transfer_id: null,
          admin_transfer: false,
          prefunded: false,
        },
        now,
      ),
    );
    await transactWrite(benchCtx(), items);
  });
}

async function seedTrades(platform: BenchPlatform, count: number): Promise<void> {
  await inParallel(batches(count), SEED_CONCURRENCY, async (size) => {
    const now = Date.now();
    const items = Array.from({ length: size }, () => {
      const report = validateTradeReport(tradeBody(platform.platformCode, 'BUYER1', 'SELLR1'), { platformCode: platform.platformCode, nowMs: now });
      if (!report.ok) throw new Error(report.errors.join('; '));
      return tradeItems(benchCtx(), acceptedTrade(report.value, { tradeId: randomUUID(), nowMs: now, accountGroups: [platform.platformCode, platform.platformCode] }));
    }).flat();
    await transactWrite(benchCtx(), items);
  });
}

async function seedPayments(platform: BenchPlatform, count: number): Promise<void> {
  const clearing = achClearingAccount({ platform_code: platform.platformCode, participant_code: platform.participantCode }).account;
  await inParallel(batches(count), SEED_CONCURRENCY, async (size) => {
    const now = Date.now();
    const items = Array.from({ length: size }, () => {
      const id = randomUUID();
      return paymentCreationItem(benchCtx(), {
        transaction_id: id,
        platform_code: platform.platformCode,
        trade_id: null,
        participant_code: platform.participantCode,
        asset: 'USD',
        amount: '10.00',
        trade_amount: '10.00',
        status: 'submitted',
        transfer_type: 'debit',
        bank_transfer_id: id,
        funding: 'inbound_reference',
        external_account_id: null,
        description: null,
        bank_fee: null,
        inbound_reference_id: 'bench',
        clearing_account: clearing,
        created_at_ms: now,
        updated_at_ms: now,
      });
    });
    await transactWrite(benchCtx(), items);
  });
}

/** Accounts are opened by credits: one movement per batch credits `size` new accounts from the boundary. */
async function seedAccounts(platform: BenchPlatform, count: number): Promise<void> {
  const boundary = systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, 'deposits', 'USD');
  await inParallel(batches(count), SEED_CONCURRENCY, async (size, b) => {
    const legs: Leg[] = [];
    for (let i = 0; i < size; i++) {
      const account = { participant_code: platform.participantCode, account_group: platform.platformCode, account_label: `l${b}x${i}`, asset: 'USD' };
      legs.push({ account, platform_code: platform.platformCode, amount: new Money(1) }, { account: boundary, platform_code: null, amount: new Money(-1) });
    }
    await transactWrite(benchCtx(), movementItems(benchCtx(), { movement_id: randomUUID(), type: 'deposit', reference: 'bench', legs }));
  });
}

async function seedParticipants(platform: BenchPlatform, count: number): Promise<void> {
  await inParallel(Array.from({ length: count }), SEED_CONCURRENCY * 2, async () => {
    await createCustomer(benchCtx(), platform.platformCode, parseCustomer(adultBody(), Date.now()));
  });
}

const SEEDERS: Record<List, (platform: BenchPlatform, count: number) => Promise<void>> = {
  '/transfers': seedTransfers,
  '/trades': seedTrades,
  '/accounts': seedAccounts,
  '/participants': seedParticipants,
  '/payments/status': seedPayments,
};

export interface ListScaleRow {
  list: List;
  records: number;
  p50: number;
  readUnits: number;
  count: number | null;
}

export interface ListScaling {
  rows: ListScaleRow[];
  seedSeconds: Record<number, number>;
  pageRatioMax: number;
  readUnitsRatioMax: number;
}

async function measurePage(platform: BenchPlatform, meter: DynamoMeter, list: List, samples: number): Promise<{ p50: number; readUnits: number; count: number | null }> {
  const latencies: number[] = [];
  let count: number | null = null;
  meter.readCapacity = true;
  const before = meter.readUnits;
  try {
    for (let i = 0; i < samples; i++) {
      const response = await platform.client.get(`${list}?${PAGE[list]}`);
      expectStatus(response, 200, `GET ${list}`);
      latencies.push(response.ms);
      count = response.body.count;
    }
  } finally {
    meter.readCapacity = false;
  }
  // The API key read of the signature check is the same at any size; it is part of the request's cost.
  return { p50: median(latencies), readUnits: (meter.readUnits - before) / samples, count };
}

/** Seeds a small and a large platform with `small` and `large` records in each list and measures page 1. */
export async function measureListPages(baseUrl: string, meter: DynamoMeter, sizes: { small: number; large: number }, samples: number): Promise<ListScaling> {
  const rows: ListScaleRow[] = [];
  const seedSeconds: Record<number, number> = {};
  const platforms: Record<number, BenchPlatform> = {};
  for (const records of [sizes.small, sizes.large]) {
    const platform = await newBenchPlatform(baseUrl, `bench lists ${records}`);
    platforms[records] = platform;
    const started = Date.now();
    for (const list of LISTS) {
      // The platform's own participant is one of them.
      await SEEDERS[list](platform, list === '/participants' ? records - 1 : records);
      process.stderr.write(`  seeded ${records} ${list} in ${((Date.now() - started) / 1000).toFixed(0)} s so far\n`);
    }
    seedSeconds[records] = (Date.now() - started) / 1000;
  }
  // Interleaved, so machine noise hits both sizes alike.
  for (const list of LISTS) {
    for (const records of [sizes.small, sizes.large]) rows.push({ list, records, ...(await measurePage(platforms[records]!, meter, list, samples)) });
  }
  const ratio = (pick: (row: ListScaleRow) => number) =>
    Math.max(
      ...LISTS.map((list) => {
        const small = rows.find((row) => row.list === list && row.records === sizes.small)!;
        const large = rows.find((row) => row.list === list && row.records === sizes.large)!;
        return pick(large) / pick(small);
      }),
    );
  return { rows, seedSeconds, pageRatioMax: ratio((row) => row.p50), readUnitsRatioMax: ratio((row) => row.readUnits) };
}
