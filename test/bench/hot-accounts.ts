import { randomUUID } from 'node:crypto';
import { deposit } from '../../lib/ledger/deposit.js';
import { setReferencePrice } from '../../lib/pricing/price-source.js';
import { expectStatus, newBenchPlatform, type BenchPlatform, type BenchResponse } from './client.js';
import { newCustomer, varied } from './fixtures.js';
import { benchCtx, describeCalls, type DynamoMeter, type TracedCall } from './stack.js';
import { percentile } from './stats.js';
import { makeLanes, transferBody, type Lane } from './transfers.js';

/**
 * Hot accounts (lib/store/README.md, "Hot accounts"): callers all debiting one account against callers on
 * accounts of their own, in interleaved phases of one run, so the ratio says what group commit recovers of
 * the throughput contention would take away. Then the same account at 64 callers, and the two other paths
 * that land on a platform's own accounts: POST /rewards (its USD account) and ACH-funded POST
 * /liquidity/execute (its `ach_clearing` account).
 */

interface PhaseResult {
  booked: number;
  unavailable: number;
  ms: number;
  latencies: number[];
}

/** `callers` concurrent loops of `request` for `durationMs`; 503s counted apart, anything else but `ok` fails the run. */
async function phase(
  callers: number,
  durationMs: number,
  ok: number,
  what: string,
  request: (caller: number) => Promise<BenchResponse>,
): Promise<PhaseResult> {
  const result: PhaseResult = { booked: 0, unavailable: 0, ms: 0, latencies: [] };
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (performance.now() < until) {
        const response = await request(caller);
        if (response.status === 503) result.unavailable += 1;
        else {
          expectStatus(response, ok, what);
          result.booked += 1;
        }
        result.latencies.push(response.ms);
      }
    }),
  );
  result.ms = performance.now() - started;
  return result;
}

const perSecond = (phases: readonly PhaseResult[]) =>
  (phases.reduce((sum, p) => sum + p.booked, 0) / phases.reduce((sum, p) => sum + p.ms, 0)) * 1000;

export interface HotLine {
  label: string;
  callers: number;
  perSecond: number;
  p50: number;
  p99: number;
  unavailable: number;
}

export interface HotAccountsResult {
  /** Transfers/s, 16 callers all debiting one account ÷ 16 callers each on its own account. */
  ratio: number;
  ownPerSecond: number;
  lines: HotLine[];
  /** What the engine's commit rounds cost in DynamoDB calls, over the 16-caller one-account phases. */
  rounds: RoundCalls;
}

/**
 * The engine's functions that make up a commit round of a hot account (lib/ledger/hot-account.ts): taking a turn
 * (the result or the lease), the round itself (the queue read, the accounts read, the transaction), a refusal
 * alone, the lease. A call is the round's when one of these is on the stack that sent it; a booking's own calls
 * (its first read of the accounts, its queue entry) are not. If the engine's round moves to other functions,
 * the count finds no round and says so (`RoundCalls.problem`) rather than counting something else.
 */
const ROUND_FRAMES = ['takeTurn', 'commitRound', 'refuseAlone', 'acquireLease', 'releaseLease'];
const ENGINE_FILE = '/lib/ledger/';

export interface RoundCalls {
  /** Committed rounds: the round transactions sent (a round that committed nothing sends none). */
  rounds: number;
  /** Bookings booked in the phases traced, per round. */
  bookingsPerRound: number | null;
  /** The rounds' DynamoDB calls (every call under ROUND_FRAMES, empty turns included) per round. */
  callsPerRound: number | null;
  /** The same counted as round trips: calls in flight together (a round's shard queries) count once. */
  roundTripsPerRound: number | null;
  /** The round's calls per round by the engine function that sent them and command, e.g. `commitRound Query×4`. */
  breakdown: string;
  /** Why the figures are null, if they are. */
  problem?: string;
}

/** The engine's function nearest the call on its stack (`at async commitRound (…/lib/ledger/hot-account.ts:1:2)`). */
function engineFrames(stack: string): string[] {
  return stack
    .split('\n')
    .filter((line) => line.includes(ENGINE_FILE))
    .map((line) => /at (?:async )?(?:[\w$]+\.)?([\w$<>]+) \(/.exec(line)?.[1] ?? 'anonymous');
}

export function roundCalls(traced: readonly TracedCall[], booked: number): RoundCalls {
  const calls = traced
    .map((call) => ({ call, frames: engineFrames(call.stack) }))
    .filter(({ frames }) => frames.some((frame) => ROUND_FRAMES.includes(frame)));
  const rounds = calls.filter(({ call }) => call.command === 'TransactWriteItems').length;
  const byFunction = new Map<string, number>();
  for (const { call, frames } of calls) {
    // Named by the nearest engine function with a name (a round's shard queries go out from an arrow function).
    const key = `${frames.find((frame) => !frame.includes('anonymous')) ?? 'anonymous'} ${call.command}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + 1);
  }
  // Round trips: calls sorted by when they were sent, a new trip whenever a call starts after every call of the
  // current one has been answered. A process takes one turn at a time per account, so a round's calls are
  // sequential but for what the engine sends at once.
  let trips = 0;
  let tripEnds = -Infinity;
  for (const { call } of [...calls].sort((a, b) => a.call.startMs - b.call.startMs)) {
    if (call.startMs >= tripEnds) {
      trips += 1;
      tripEnds = call.endMs;
    } else tripEnds = Math.max(tripEnds, call.endMs);
  }
  if (rounds === 0)
    return {
      rounds,
      bookingsPerRound: null,
      callsPerRound: null,
      roundTripsPerRound: null,
      breakdown: describeCalls(byFunction),
      problem:
        calls.length === 0
          ? `no DynamoDB call under the engine's round functions (${ROUND_FRAMES.join(', ')} in ${ENGINE_FILE}); if the engine's round moved, update ROUND_FRAMES in test/bench/hot-accounts.ts`
          : 'no round transaction among the round calls',
    };
  return {
    rounds,
    bookingsPerRound: booked / rounds,
    callsPerRound: calls.length / rounds,
    roundTripsPerRound: trips / rounds,
    breakdown: describeCalls(byFunction, rounds),
  };
}

function line(label: string, callers: number, phases: readonly PhaseResult[]): HotLine {
  const latencies = phases.flatMap((p) => p.latencies);
  return {
    label,
    callers,
    perSecond: perSecond(phases),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    unavailable: phases.reduce((sum, p) => sum + p.unavailable, 0),
  };
}

async function fundedSource(platform: BenchPlatform): Promise<string> {
  const source = await newCustomer(platform);
  await deposit(benchCtx(), { reference: randomUUID(), participantCode: source, asset: 'USD', amount: '1000000000' });
  return source;
}

export async function measureHotAccounts(
  baseUrl: string,
  meter: DynamoMeter,
  options: { callers: number; rounds: number; phaseMs: number },
): Promise<HotAccountsResult> {
  const platform = await newBenchPlatform(baseUrl, 'bench hot accounts');
  const { callers, rounds, phaseMs } = options;
  const own = await makeLanes(platform, callers);
  const source = await fundedSource(platform);
  const hotLanes = (count: number) =>
    Array.from(
      { length: count },
      (_, i): Lane => ({ from: source, to: platform.participantCode, toLabel: `hot-${i}` }),
    );
  const transfer = (lanes: readonly Lane[]) => (caller: number) =>
    platform.client.post('/transfers', transferBody(lanes[caller]!));

  // Warm both paths (the hot account's queue included), then alternate which goes first in each round.
  await phase(callers, 1000, 201, 'POST /transfers (own accounts)', transfer(own));
  await phase(callers, 1000, 201, 'POST /transfers (one account)', transfer(hotLanes(callers)));
  const ownPhases: PhaseResult[] = [];
  const hotPhases: PhaseResult[] = [];
  // Every call of the one-account phases is traced, to count the engine's rounds; the own-accounts phases are
  // traced too (and the trace dropped), so both pay the same for the tracing and the ratio stays fair.
  const hotCalls: TracedCall[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['own', 'hot'] as const) : (['hot', 'own'] as const);
      for (const kind of order) {
        if (kind === 'own') {
          meter.traced = [];
          ownPhases.push(await phase(callers, phaseMs, 201, 'POST /transfers (own accounts)', transfer(own)));
        } else {
          meter.traced = hotCalls;
          hotPhases.push(
            await phase(callers, phaseMs, 201, 'POST /transfers (one account)', transfer(hotLanes(callers))),
          );
        }
      }
    }
  } finally {
    meter.traced = undefined;
  }
  // A call sent by a phase's last requests is answered before the phase ends (every caller awaits its request).
  const roundsSeen = roundCalls(
    hotCalls,
    hotPhases.reduce((sum, p) => sum + p.booked, 0),
  );
  const wide = 64;
  const hot64 = await phase(
    wide,
    phaseMs,
    201,
    `POST /transfers (${wide} callers, one account)`,
    transfer(hotLanes(wide)),
  );

  // POST /rewards: every reward debits the platform's own USD account.
  await setReferencePrice(benchCtx(), 'BTC', 'USD', '50000');
  await deposit(benchCtx(), {
    reference: randomUUID(),
    participantCode: platform.participantCode,
    asset: 'USD',
    amount: '1000000000',
  });
  const rewarded = await newCustomer(platform);
  const rewards = await phase(callers, phaseMs, 201, 'POST /rewards (one platform)', () =>
    platform.client.post('/rewards', {
      underlying: 'BTC',
      quoted_currency: 'USD',
      quantity: varied('0.00001', 8),
      participant_code: rewarded,
    }),
  );

  // ACH-funded purchases: every one debits the platform's ach_clearing account (the quote is untimed).
  await deposit(benchCtx(), {
    reference: randomUUID(),
    participantCode: platform.participantCode,
    asset: 'USD',
    amount: '1000000000',
    accountLabel: 'ach_clearing',
  });
  const ach = await phase(callers, phaseMs, 200, 'POST /liquidity/execute (ACH, one platform)', async () => {
    // A quote GET's signature is claimed like a POST's: identical ones in one second would be replays (409).
    const quote = await platform.client.get(
      `/liquidity/rfq?side=buy&underlying=BTC&quoted_currency=USD&total=${varied('10', 2)}`,
    );
    expectStatus(quote, 200, 'GET /liquidity/rfq');
    return platform.client.post('/liquidity/execute', {
      quote_id: quote.body.message.quote_id,
      funding_details: { external_account_id: randomUUID(), description: 'BENCH', bank_fee: '0.50' },
    });
  });

  const ownPerSecond = perSecond(ownPhases);
  const hotLine = line('POST /transfers, one account', callers, hotPhases);
  return {
    ratio: hotLine.perSecond / ownPerSecond,
    ownPerSecond,
    rounds: roundsSeen,
    lines: [
      line('POST /transfers, own accounts', callers, ownPhases),
      hotLine,
      line('POST /transfers, one account', wide, [hot64]),
      line('POST /rewards, one platform account', callers, [rewards]),
      line('POST /liquidity/execute (ACH), one clearing account', callers, [ach]),
    ],
  };
}
