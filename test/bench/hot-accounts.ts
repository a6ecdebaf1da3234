import { randomUUID } from 'node:crypto';
import { deposit } from '../../lib/ledger/deposit.js';
import { setReferencePrice } from '../../lib/pricing/price-source.js';
import { expectStatus, newBenchPlatform, type BenchPlatform, type BenchResponse } from './client.js';
import { newCustomer, varied } from './fixtures.js';
import { benchCtx } from './stack.js';
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
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['own', 'hot'] as const) : (['hot', 'own'] as const);
    for (const kind of order) {
      if (kind === 'own')
        ownPhases.push(await phase(callers, phaseMs, 201, 'POST /transfers (own accounts)', transfer(own)));
      else
        hotPhases.push(
          await phase(callers, phaseMs, 201, 'POST /transfers (one account)', transfer(hotLanes(callers))),
        );
    }
  }
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
    const quote = await platform.client.get('/liquidity/rfq?side=buy&underlying=BTC&quoted_currency=USD&total=10');
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
    lines: [
      line('POST /transfers, own accounts', callers, ownPhases),
      hotLine,
      line('POST /transfers, one account', wide, [hot64]),
      line('POST /rewards, one platform account', callers, [rewards]),
      line('POST /liquidity/execute (ACH), one clearing account', callers, [ach]),
    ],
  };
}
