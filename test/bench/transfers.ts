import { randomBytes, randomUUID } from 'node:crypto';
import { findAsset } from '../../lib/domain/assets.js';
import { DEFAULT_ACCOUNT_LABEL, moveLegs } from '../../lib/domain/ledger.js';
import { formatAmount, parseAmount, type Money } from '../../lib/domain/money.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { apiKeyUnchangedCheck, getApiKey, type ApiKey } from '../../lib/store/api-keys.js';
import { newId, newNumericId } from '../../lib/store/codes.js';
import { book } from '../../lib/ledger/engine.js';
import { newBookingId } from '../../lib/ledger/booking.js';
import { getParticipants, participantActiveChecks, type Participant } from '../../lib/store/participants.js';
import { transferRecordItem, TransferIdTakenError, type Transfer } from '../../lib/store/transfers.js';
import { signatureClaimItem } from '../../lib/store/windows.js';
import { SIGNATURE_WINDOW_SECONDS } from '../../lib/http/middleware/verify-signature.js';
import { expectStatus, type BenchPlatform } from './client.js';
import { newCustomer, varied } from './fixtures.js';
import { WRITE_COMMANDS } from './capacity.js';
import { describeCalls, type DynamoMeter } from './stack.js';
import { median, percentile } from './stats.js';
import { benchCtx } from './stack.js';

/**
 * One source and destination pair: a funded customer account and an account of the platform's own
 * participant. Concurrent callers each get their own lane, so what is measured is the service, not
 * DynamoDB's transaction conflicts on a shared balance.
 */
export interface Lane {
  from: string;
  to: string;
  toLabel: string;
}

const USD = findAsset('USD')!;

export async function makeLanes(platform: BenchPlatform, count: number): Promise<Lane[]> {
  const lanes: Lane[] = [];
  for (let i = 0; i < count; i++) {
    const customer = await newCustomer(platform);
    await deposit(benchCtx(), {
      reference: randomUUID(),
      participantCode: customer,
      asset: 'USD',
      amount: '1000000000',
    });
    lanes.push({ from: customer, to: platform.participantCode, toLabel: `bench-${i}` });
  }
  return lanes;
}

export function transferBody(lane: Lane, clientTransferId?: string): Record<string, string> {
  return {
    ...(clientTransferId && { client_transfer_id: clientTransferId }),
    from_participant_code: lane.from,
    to_participant_code: lane.to,
    to_account_label: lane.toLabel,
    asset: 'USD',
    amount: varied('0', 2),
  };
}

export async function httpTransfer(platform: BenchPlatform, lane: Lane, clientTransferId?: string): Promise<number> {
  const response = await platform.client.post('/transfers', transferBody(lane, clientTransferId));
  expectStatus(response, 201, 'POST /transfers');
  return response.ms;
}

/**
 * What a warm POST /transfers sends to DynamoDB on its happy path, sent directly through the same repositories
 * and shared client: one TransactWriteItems holding the replay claim, the key's unchanged check, both
 * participants' active checks and the transfer record with the movement, booked on the accounts' kept states
 * (the route reads the key and the participants once per container, so the control does too, outside the
 * timing). What this leaves out, the HTTP hop, the middleware chain, signature and JSON work, is what the
 * overhead ratio measures.
 */
export async function directTransfer(platform: BenchPlatform, lane: Lane, clientTransferId?: string): Promise<number> {
  const { key, from, to } = await directParties(platform, lane);
  const started = performance.now();
  const amount = parseAmount(varied('0', 2), USD, 'amount') as Money;
  const legs = moveLegs(
    {
      account: {
        participant_code: from.participant_code,
        account_group: from.platform_code,
        account_label: DEFAULT_ACCOUNT_LABEL,
        asset: 'USD',
      },
      platform_code: from.platform_code,
    },
    {
      account: {
        participant_code: to.participant_code,
        account_group: to.platform_code,
        account_label: lane.toLabel,
        asset: 'USD',
      },
      platform_code: to.platform_code,
    },
    amount,
  );
  // As the use case does: a numeric id drawn twice in one millisecond (three random digits) is drawn again.
  for (let draw = 1; ; draw++) {
    const nowMs = benchCtx().clock.nowMs();
    const iso = new Date(nowMs).toISOString();
    const movementId = newId();
    const transfer: Transfer = {
      id: newNumericId(nowMs),
      platform_code: platform.platformCode,
      created_at: iso,
      updated_at: iso,
      status: 'approved',
      from_participant_code: from.participant_code,
      from_account_group: from.platform_code,
      from_account_label: DEFAULT_ACCOUNT_LABEL,
      to_participant_code: to.participant_code,
      to_account_group: to.platform_code,
      to_account_label: lane.toLabel,
      asset: 'USD',
      amount: formatAmount(amount, USD),
      movement_id: movementId,
      client_transfer_id: clientTransferId ?? null,
      admin_transfer: false,
      prefunded: false,
    };
    try {
      await book(benchCtx(), {
        id: newBookingId(nowMs),
        atMs: nowMs,
        movement: { movement_id: movementId, type: 'transfer', reference: `transfer:${transfer.id}`, legs },
        items: [
          // A fresh random stand-in for the 44-character signature, so the claim has the real item's size.
          {
            item: signatureClaimItem(benchCtx(), {
              apiKey: key.api_key,
              signature: randomBytes(32).toString('base64'),
              nowMs,
              windowMs: (SIGNATURE_WINDOW_SECONDS + 1) * 1000,
              requestId: undefined,
            }),
          },
          { item: apiKeyUnchangedCheck(benchCtx(), key) },
          ...participantActiveChecks(benchCtx(), [
            { code: from.participant_code, field: 'from_participant_code' },
            { code: to.participant_code, field: 'to_participant_code' },
          ]),
          transferRecordItem(benchCtx(), transfer, nowMs),
        ],
      });
      break;
    } catch (error) {
      if (!(error instanceof TransferIdTakenError) || draw >= 5) throw error;
    }
  }
  return performance.now() - started;
}

/** The key and both participants, read once per lane as a warm function keeps them. */
const partiesByLane = new WeakMap<Lane, Promise<{ key: ApiKey; from: Participant; to: Participant }>>();

function directParties(platform: BenchPlatform, lane: Lane) {
  let parties = partiesByLane.get(lane);
  if (!parties) {
    parties = (async () => {
      const key = await getApiKey(benchCtx(), platform.client.credentials.api_key);
      if (!key) throw new Error('direct transfer: the bench API key is missing');
      const participants = await getParticipants(benchCtx(), [lane.from, lane.to]);
      const [from, to] = [participants.get(lane.from), participants.get(lane.to)];
      if (!from || !to) throw new Error('direct transfer: participant missing');
      return { key, from, to };
    })();
    partiesByLane.set(lane, parties);
  }
  return parties;
}

export interface OverheadResult {
  httpP50: number;
  httpP99: number;
  directP50: number;
  directP99: number;
  ratio: number;
  samples: number;
}

/**
 * One caller, HTTP and direct transfers alternating (and alternating which goes first), so both see the same
 * machine and the same table size; a warm-up round is discarded.
 */
export async function measureOverhead(
  platform: BenchPlatform,
  lane: Lane,
  pairs: number,
  warmup = 30,
): Promise<OverheadResult> {
  const http: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < warmup + pairs; i++) {
    const order = i % 2 === 0 ? [httpTransfer, directTransfer] : [directTransfer, httpTransfer];
    for (const run of order) {
      const ms = await run(platform, lane);
      if (i >= warmup) (run === httpTransfer ? http : direct).push(ms);
    }
  }
  const httpP50 = median(http);
  const directP50 = median(direct);
  return {
    httpP50,
    httpP99: percentile(http, 99),
    directP50,
    directP99: percentile(direct, 99),
    ratio: httpP50 / directP50,
    samples: pairs,
  };
}

export interface ThroughputResult {
  httpPerSecond: number;
  directPerSecond: number;
  ratio: number;
  concurrency: number;
  httpP50: number;
  directP50: number;
}

async function phase(run: typeof httpTransfer, platform: BenchPlatform, lanes: readonly Lane[], durationMs: number) {
  const started = performance.now();
  const until = started + durationMs;
  const latencies: number[] = [];
  let failure: unknown;
  // One caller failing stops the others (rather than leaving them running into the next measurement).
  await Promise.all(
    lanes.map(async (lane) => {
      try {
        while (failure === undefined && performance.now() < until) latencies.push(await run(platform, lane));
      } catch (error) {
        failure ??= error;
      }
    }),
  );
  if (failure !== undefined) throw failure;
  return { count: latencies.length, ms: performance.now() - started, latencies };
}

/**
 * `lanes.length` concurrent callers, in timed phases ordered HTTP, direct, direct, HTTP, ... so a drift in
 * machine load over the run falls on both sides alike. Rate = transfers completed / time the phases took.
 */
export async function measureThroughput(
  platform: BenchPlatform,
  lanes: readonly Lane[],
  rounds: number,
  phaseMs: number,
): Promise<ThroughputResult> {
  await phase(httpTransfer, platform, lanes, 500);
  await phase(directTransfer, platform, lanes, 500);
  const totals = {
    http: { count: 0, ms: 0, latencies: [] as number[] },
    direct: { count: 0, ms: 0, latencies: [] as number[] },
  };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['http', 'direct'] as const) : (['direct', 'http'] as const);
    for (const kind of order) {
      const result = await phase(kind === 'http' ? httpTransfer : directTransfer, platform, lanes, phaseMs);
      totals[kind].count += result.count;
      totals[kind].ms += result.ms;
      totals[kind].latencies.push(...result.latencies);
    }
  }
  const httpPerSecond = (totals.http.count / totals.http.ms) * 1000;
  const directPerSecond = (totals.direct.count / totals.direct.ms) * 1000;
  return {
    httpPerSecond,
    directPerSecond,
    ratio: httpPerSecond / directPerSecond,
    concurrency: lanes.length,
    httpP50: median(totals.http.latencies),
    directP50: median(totals.direct.latencies),
  };
}

export interface CapacityResult {
  label: string;
  /** Per transfer, by DynamoDB's per-item rules (the figure the goal is judged on). */
  wcuPerTransfer: number;
  /** Per transfer, as DynamoDB Local's ReturnConsumedCapacity reported it. */
  reportedWcuPerTransfer: number;
  minimum: number;
  ratio: number;
  writes: string;
}

/**
 * Write capacity a transfer consumes through HTTP (ReturnConsumedCapacity=TOTAL on every write the handler
 * makes; see capacity.ts) against the least the design can spend:
 *
 * - the TransactWriteItems: transactional writes cost 2 WCU per item per KB, and a transfer must write, every
 *   item under 1 KB at best: the movement record, both balances and the transfer record;
 *   the platform's transfers and movements counter shards (counts come from counters
 *   written in the record's transaction); each account's movement entry (GET /accounts/{id}/movements is
 *   one Query of the account's own partition); and each account's `account_balance.changed` event (design
 *   section 8: recorded in the change's own transaction). 10 items: 20 WCU;
 * - the signature's replay claim, which the booking's transaction carries (so a refused transfer leaves none):
 *   one more transactional item, 2 WCU;
 * - the check that the API key is still the one the request was verified against (not revoked), which the
 *   transaction carries instead of a read of the key: a ConditionCheck, 2 WCU;
 * - with a `client_transfer_id`, its 72-hour claim, one more transactional item: 2 WCU.
 *
 * So 24 WCU per transfer, 26 with a client id.
 */
export async function measureCapacity(
  platform: BenchPlatform,
  lane: Lane,
  meter: DynamoMeter,
  count: number,
): Promise<CapacityResult[]> {
  const results: CapacityResult[] = [];
  const cases = [
    { label: 'POST /transfers', minimum: 24, clientId: () => undefined },
    { label: 'POST /transfers + client_transfer_id', minimum: 26, clientId: () => `bench-${randomUUID()}` },
  ];
  meter.capacity = true;
  try {
    for (const { label, minimum, clientId } of cases) {
      const before = meter.snapshot();
      for (let i = 0; i < count; i++) await httpTransfer(platform, lane, clientId());
      const spent = meter.since(before);
      const writes = new Map([...spent.byCommand].filter(([command]) => WRITE_COMMANDS.has(command)));
      const wcuPerTransfer = spent.ruleWcu / count;
      results.push({
        label,
        wcuPerTransfer,
        reportedWcuPerTransfer: spent.reportedWcu / count,
        minimum,
        ratio: wcuPerTransfer / minimum,
        writes: describeCalls(writes, count),
      });
    }
  } finally {
    meter.capacity = false;
  }
  return results;
}
