import { randomUUID } from 'node:crypto';
import { routes } from '../../infra/routes.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { setReferencePrice } from '../../lib/pricing/price-source.js';
import { setNetworkFee } from '../../lib/withdrawals/network-fees.js';
import { expectStatus, type BenchPlatform, type BenchResponse } from './client.js';
import { adultBody, fundedTradePair, minorBody, newCustomer, tradeBody, varied } from './fixtures.js';
import { describeCalls, type DynamoMeter } from './stack.js';
import { median, percentile } from './stats.js';
import { transferBody, type Lane } from './transfers.js';
import { benchCtx } from './stack.js';

export interface EndpointContext {
  platform: BenchPlatform;
  lane: Lane;
}

type Send = () => Promise<BenchResponse>;

interface Scenario {
  /** The status every timed request must get. */
  status: number;
  /**
   * Runs once before timing, to create what the requests need. Returns `next`, which readies one request
   * (untimed, e.g. a fresh quote to execute) and returns the request to time.
   */
  prepare(context: EndpointContext): Promise<() => Promise<Send>>;
}

/** The same request every time. */
const each = (send: Send) => async () => send;

// A quote GET creates a quote, so its signature is claimed like a POST's (lib/http/middleware/verify-signature.ts):
// an identical one in the same second is a replay (409). Each asks for a slightly different quantity instead.
const RFQ = () => `/liquidity/rfq?side=buy&underlying=BTC&quoted_currency=USD&quantity=${varied('0.0001', 8)}`;
// EIP-55's own example address: a valid, checksummed Ethereum address.
const CONVERT_RFQ = () =>
  `/convert_withdraw/rfq?side=buy&underlying=ETH&quoted_currency=USD&quantity=${varied('0.001', 8)}&withdrawal_address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed`;

async function customers(platform: BenchPlatform, count: number): Promise<string[]> {
  const codes: string[] = [];
  for (let i = 0; i < count; i++) codes.push(await newCustomer(platform));
  return codes;
}

/**
 * How to call each route on its happy path. Keyed like the route table (`METHOD path`); a route added to
 * the table without an entry here is reported as "no scenario" rather than skipped silently. The platform
 * holds USD, BTC/USD and ETH/USD have reference prices and ETH a network fee (see `measureEndpoints`).
 */
const SCENARIOS: Record<string, Scenario> = {
  'GET /time': {
    status: 200,
    prepare: async ({ platform }) => each(() => platform.client.request('GET', '/time', undefined, { unsigned: true })),
  },
  'GET /assets': { status: 200, prepare: async ({ platform }) => each(() => platform.client.get('/assets')) },
  'POST /participants/customers/new': {
    status: 201,
    prepare: async ({ platform }) => each(() => platform.client.post('/participants/customers/new', adultBody())),
  },
  'POST /participants/customers/minor': {
    status: 201,
    prepare: async ({ platform }) => {
      const custodian = await newCustomer(platform);
      return each(() => platform.client.post('/participants/customers/minor', minorBody(custodian)));
    },
  },
  'GET /participants': {
    status: 200,
    prepare: async ({ platform }) => each(() => platform.client.get('/participants')),
  },
  'GET /accounts': { status: 200, prepare: async ({ platform }) => each(() => platform.client.get('/accounts')) },
  'POST /transfers': {
    status: 201,
    prepare: async ({ platform, lane }) => each(() => platform.client.post('/transfers', transferBody(lane))),
  },
  'GET /transfers': { status: 200, prepare: async ({ platform }) => each(() => platform.client.get('/transfers')) },
  'GET /transfers/{id}': {
    status: 200,
    prepare: async ({ platform, lane }) => {
      const created = await platform.client.post('/transfers', transferBody(lane));
      expectStatus(created, 201, 'POST /transfers');
      return each(() => platform.client.get(`/transfers/${created.body.message.id}`));
    },
  },
  'POST /trades': {
    status: 200,
    prepare: async ({ platform }) => {
      const { buyer, seller } = await fundedTradePair(platform, 200);
      return each(() => platform.client.post('/trades', tradeBody(platform.platformCode, buyer, seller)));
    },
  },
  'GET /trades': { status: 200, prepare: async ({ platform }) => each(() => platform.client.get('/trades')) },
  'GET /trades/{trade_id}': {
    status: 200,
    prepare: async ({ platform }) => {
      const { buyer, seller } = await fundedTradePair(platform, 1);
      const created = await platform.client.post('/trades', tradeBody(platform.platformCode, buyer, seller));
      expectStatus(created, 200, 'POST /trades');
      return each(() => platform.client.get(`/trades/${created.body.message.trade_id}`));
    },
  },
  'GET /liquidity/rfq': { status: 200, prepare: async ({ platform }) => each(() => platform.client.get(RFQ())) },
  'POST /liquidity/execute': {
    status: 200,
    prepare:
      async ({ platform }) =>
      async () => {
        const quote = await platform.client.get(RFQ());
        expectStatus(quote, 200, 'GET /liquidity/rfq');
        return () => platform.client.post('/liquidity/execute', { quote_id: quote.body.message.quote_id });
      },
  },
  'GET /convert_withdraw/rfq': {
    status: 200,
    prepare: async ({ platform }) => each(() => platform.client.get(CONVERT_RFQ())),
  },
  'POST /convert_withdraw/execute': {
    status: 200,
    prepare:
      async ({ platform }) =>
      async () => {
        const quote = await platform.client.get(CONVERT_RFQ());
        expectStatus(quote, 200, 'GET /convert_withdraw/rfq');
        return () => platform.client.post('/convert_withdraw/execute', { quote_id: quote.body.message.quote_id });
      },
  },
  'GET /payments/status': {
    status: 200,
    prepare: async ({ platform }) => each(() => platform.client.get('/payments/status')),
  },
  'POST /rewards': {
    status: 201,
    prepare: async ({ platform }) => {
      const [customer] = await customers(platform, 1);
      return each(() =>
        platform.client.post('/rewards', {
          underlying: 'BTC',
          quoted_currency: 'USD',
          quantity: varied('0.0001', 8),
          participant_code: customer,
        }),
      );
    },
  },
  'POST /awards/fund': {
    status: 201,
    prepare: async ({ platform }) =>
      each(() =>
        platform.client.post('/awards/fund', {
          underlying: 'BTC',
          quoted_currency: 'USD',
          quantity: varied('0.0001', 8),
        }),
      ),
  },
  'POST /awards/distribute': {
    status: 201,
    prepare: async ({ platform }) => {
      // Ten recipients a request, from a pool bought up front for every request this scenario sends.
      const recipients = await customers(platform, 10);
      const funded = await platform.client.post('/awards/fund', {
        underlying: 'BTC',
        quoted_currency: 'USD',
        quantity: '0.5',
      });
      expectStatus(funded, 201, 'POST /awards/fund');
      return each(() =>
        platform.client.post('/awards/distribute', {
          asset: 'BTC',
          quantity: varied('0.0001', 8),
          participant_codes: recipients,
        }),
      );
    },
  },
};

export interface EndpointRow {
  route: string;
  p50: number | null;
  p99: number | null;
  samples: number;
  /** Mean DynamoDB operations per request, and which. */
  callsPerRequest: number | null;
  /**
   * The median request's DynamoDB calls: what a typical request waits for, so what its p50 on AWS is made of.
   * The mean can be higher by the rate-limit counter's block writes, which a request in several pays.
   */
  callsMedian: number | null;
  /** Whether the route answered a list (a `count` in its body). */
  list: boolean;
  /** Whether endpoints.ts has a scenario for the route (a row without one is listed, not measured). */
  scenario: boolean;
  calls: string;
  note: string;
}

/**
 * Every route of the table, one request at a time (light load): latency through the local HTTP server and
 * the DynamoDB operations each request sends. Sequential requests with nothing else running, so the meter's
 * count between a request's start and its response is that request's.
 *
 * Settlement executions are not started meanwhile: POST /trades gets a starter that only counts, standing
 * in for the one Step Functions StartExecution call it makes on AWS (the local runner's own bookkeeping in
 * DynamoDB is not part of the handler's cost, and running executions would add calls to other requests).
 */
export async function measureEndpoints(
  context: EndpointContext,
  meter: DynamoMeter,
  samples: number,
  warmup = 5,
): Promise<EndpointRow[]> {
  await setReferencePrice(benchCtx(), 'BTC', 'USD', '50000');
  await setReferencePrice(benchCtx(), 'ETH', 'USD', '2500');
  await setNetworkFee(benchCtx(), 'ETH', '0.0001');
  await deposit(benchCtx(), {
    reference: randomUUID(),
    participantCode: context.platform.participantCode,
    asset: 'USD',
    amount: '10000000',
  });
  let executionsStarted = 0;
  const ctx = benchCtx();
  const workflow = ctx.workflow;
  ctx.workflow = {
    start: async () => {
      executionsStarted += 1;
    },
    ensure: async () => 'running',
  };
  const rows: EndpointRow[] = [];
  try {
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      const scenario = SCENARIOS[key];
      const row: EndpointRow = {
        route: key,
        p50: null,
        p99: null,
        samples: 0,
        callsPerRequest: null,
        callsMedian: null,
        list: false,
        scenario: scenario !== undefined,
        calls: '',
        note: '',
      };
      rows.push(row);
      if (!scenario) {
        row.note = 'no scenario in test/bench/endpoints.ts';
        continue;
      }
      try {
        const next = await scenario.prepare(context);
        for (let i = 0; i < warmup; i++) expectStatus(await (await next())(), scenario.status, key);
        const latencies: number[] = [];
        const startedBefore = executionsStarted;
        const byCommand = new Map<string, number>();
        let calls = 0;
        const perRequest: number[] = [];
        let listed: number | undefined;
        for (let i = 0; i < samples; i++) {
          const send = await next();
          const before = meter.snapshot();
          const response = await send();
          const spent = meter.since(before);
          expectStatus(response, scenario.status, key);
          latencies.push(response.ms);
          calls += spent.calls;
          perRequest.push(spent.calls);
          for (const [command, count] of spent.byCommand) byCommand.set(command, (byCommand.get(command) ?? 0) + count);
          if (typeof response.body?.count === 'number') listed = response.body.count;
        }
        Object.assign(row, {
          p50: median(latencies),
          p99: percentile(latencies, 99),
          samples,
          callsPerRequest: calls / samples,
          callsMedian: median(perRequest),
          list: listed !== undefined,
          calls: describeCalls(byCommand, samples),
          note: [
            ...(listed !== undefined ? [`list of ${listed}`] : []),
            ...(executionsStarted > startedBefore
              ? [`+ StartExecution×${(executionsStarted - startedBefore) / samples} (Step Functions on AWS)`]
              : []),
          ].join('; '),
        });
      } catch (error) {
        row.note = `FAILED: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}`;
      }
    }
  } finally {
    ctx.workflow = workflow;
  }
  return rows;
}

/** GET /transfers on a platform with many transfers: the list is read whole to count its pages. */
export async function measureListScaling(
  platform: BenchPlatform,
  meter: DynamoMeter,
  samples: number,
): Promise<EndpointRow> {
  const latencies: number[] = [];
  const perRequest: number[] = [];
  const before = meter.snapshot();
  let listed = 0;
  for (let i = 0; i < samples; i++) {
    const one = meter.snapshot();
    const response = await platform.client.get('/transfers');
    perRequest.push(meter.since(one).calls);
    expectStatus(response, 200, 'GET /transfers');
    latencies.push(response.ms);
    listed = response.body.count;
  }
  const spent = meter.since(before);
  return {
    route: 'GET /transfers (after throughput)',
    p50: median(latencies),
    p99: percentile(latencies, 99),
    samples,
    callsPerRequest: spent.calls / samples,
    callsMedian: median(perRequest),
    list: true,
    scenario: true,
    calls: describeCalls(spent.byCommand, samples),
    note: `list of ${listed}`,
  };
}
