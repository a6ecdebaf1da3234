import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ApiKeyCredentials } from '../../lib/store/api-keys.js';
import { SignedClient, type BenchResponse } from './signed-client.js';
import { settle, type Settling } from './jvm-warmup.js';
import { ownCpuMs } from './stats.js';

/**
 * The two platforms of the isolation scenario (lists.ts), each a client process of its own.
 *
 * A platform is another company's machine: its HTTP client, signing and JSON parsing cost the service
 * nothing. Run inside the benchmark's process, that client work shared the event loop with the server under
 * test, so the measured platform's requests waited for the listing platform's client code and their own,
 * which no deployment would see. So both clients run here, in child processes the benchmark forks with its
 * own loader flags (tsx), and talk to the service over HTTP only:
 *
 * - `walk`: the listing platform, on many connections, until told to stop (an IPC message), then reports;
 * - `sample`: the measured platform, one request at a time: first until DynamoDB Local's JIT has settled on
 *   the load of the moment (jvm-warmup.ts), then the samples, then reports.
 */

/** Every cursor list of the API, each with its page-size parameter (the payments list keeps the spec's `size`). */
export const LISTS = [
  '/transfers',
  '/trades',
  '/accounts',
  '/participants',
  '/payments/status',
  '/movements',
  '/withdrawals/requests',
] as const;
export type List = (typeof LISTS)[number];

export const PAGE: Record<List, string> = {
  '/transfers': 'page_size=100',
  '/trades': 'page_size=100',
  '/accounts': 'page_size=100',
  '/participants': 'page_size=100',
  '/payments/status': 'size=100',
  '/movements': 'page_size=100',
  '/withdrawals/requests': 'page_size=100',
};

/** What the child walks: the service, the listing platform's key, the lists in turn, on how many connections. */
export interface WalkOrders {
  baseUrl: string;
  credentials: ApiKeyCredentials;
  lists: readonly List[];
  connections: number;
}

/** What the child saw, per list: each page's latency and how many were not 200, and the first such answer. */
export interface WalkReport {
  pages: Partial<Record<List, { latencies: number[]; failures: number }>>;
  firstFailure: string | null;
  seconds: number;
  /** CPU milliseconds this client process used while walking. */
  cpuMs: number;
}

/** What the sampling child does: `path` one request at a time, warmed up against DynamoDB Local's JIT. */
export interface SampleOrders {
  baseUrl: string;
  credentials: ApiKeyCredentials;
  path: string;
  samples: number;
  /** DynamoDB Local's process, whose JIT the warm-up waits for. */
  dynamoPid: number | undefined;
}

export interface SampleReport {
  latencies: number[];
  /** Samples that did not answer 200 (their time is still a sample), and the first such answer. */
  failures: number;
  firstFailure: string | null;
  warmUp: Settling;
  /** CPU milliseconds this client process used over the samples, and their wall seconds. */
  cpuMs: number;
  seconds: number;
}

type Orders = ({ job: 'walk' } & WalkOrders) | ({ job: 'sample' } & SampleOrders);
type ToChild = { type: 'stop' };
type FromChild =
  | { type: 'walking' }
  | { type: 'report'; report: WalkReport }
  | { type: 'measuring' }
  | { type: 'samples'; report: SampleReport };

/**
 * `connections` walkers, each taking the lists in turn (starting one apart) and following five pages of a
 * list by cursor before the next, until `stopped()`.
 */
async function walk(orders: WalkOrders, stopped: () => boolean): Promise<WalkReport> {
  const client = new SignedClient(orders.baseUrl, orders.credentials);
  const pages: WalkReport['pages'] = {};
  let firstFailure: string | null = null;
  const started = performance.now();
  const cpuBefore = ownCpuMs();
  const walker = async (start: number) => {
    for (let turn = start; !stopped(); turn++) {
      const list = orders.lists[turn % orders.lists.length]!;
      const seen = (pages[list] ??= { latencies: [], failures: 0 });
      let cursor: string | null = null;
      for (let page = 0; page < 5 && !stopped(); page++) {
        const response: BenchResponse = await client.get(
          `${list}?${PAGE[list]}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        seen.latencies.push(response.ms);
        if (response.status !== 200) {
          seen.failures += 1;
          firstFailure ??= `GET ${list}: ${response.status} ${response.text.slice(0, 200)}`;
          break;
        }
        cursor = response.body?.next_cursor ?? null;
        if (!cursor) break;
      }
    }
  };
  await Promise.all(Array.from({ length: orders.connections }, (_, i) => walker(i)));
  return { pages, firstFailure, seconds: (performance.now() - started) / 1000, cpuMs: ownCpuMs() - cpuBefore };
}

/** Warms up, says so through `measuring`, then takes the samples, one request at a time. */
async function sample(orders: SampleOrders, measuring: () => void): Promise<SampleReport> {
  const client = new SignedClient(orders.baseUrl, orders.credentials);
  let warming = true;
  const warmRequests = (async () => {
    while (warming) await client.get(orders.path);
  })();
  let warmUp: Settling;
  try {
    warmUp = await settle(orders.dynamoPid);
  } finally {
    warming = false;
    await warmRequests;
  }
  measuring();
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const started = performance.now();
  const cpuBefore = ownCpuMs();
  for (let i = 0; i < orders.samples; i++) {
    const response = await client.get(orders.path);
    latencies.push(response.ms);
    if (response.status !== 200) {
      failures += 1;
      firstFailure ??= `GET ${orders.path}: ${response.status} ${response.text.slice(0, 200)}`;
    }
  }
  return {
    latencies,
    failures,
    firstFailure,
    warmUp,
    cpuMs: ownCpuMs() - cpuBefore,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Forks a client process for `orders`; `next(type)` waits for its next message of that type, and rejects if it exits first. */
function forkClient(orders: Orders) {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(orders)], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`the ${orders.job} client process exited (${code}) before reporting`)),
    ),
  );
  exited.catch(() => undefined);
  const next = <T extends FromChild['type']>(type: T) =>
    Promise.race([
      new Promise<Extract<FromChild, { type: T }>>((resolve) => {
        const listen = (message: FromChild) => {
          if (message.type !== type) return;
          child.off('message', listen);
          resolve(message as Extract<FromChild, { type: T }>);
        };
        child.on('message', listen);
      }),
      exited,
    ]);
  return { child, next };
}

/**
 * The measured platform's samples, taken by a client process of its own; `onMeasuring` runs when its
 * warm-up is over and the samples begin (the caller's CPU window over them).
 */
export async function sampleInChild(
  orders: SampleOrders,
  onMeasuring: () => void = () => undefined,
): Promise<SampleReport> {
  const { next } = forkClient({ job: 'sample', ...orders });
  const done = next('samples');
  await next('measuring');
  onMeasuring();
  return (await done).report;
}

export interface ListingProcess {
  /** Tells the child to stop; resolves with its report once every walker has finished its request in flight. */
  stop(): Promise<WalkReport>;
}

/** Forks the listing client and resolves once it is walking. */
export async function startListingProcess(orders: WalkOrders): Promise<ListingProcess> {
  const { child, next } = forkClient({ job: 'walk', ...orders });
  await next('walking');
  let report: Promise<WalkReport> | undefined;
  return {
    stop() {
      report ??= (async () => {
        const answer = next('report');
        child.send({ type: 'stop' } satisfies ToChild);
        return (await answer).report;
      })();
      return report;
    },
  };
}

// Run as a child: do the job ordered, report, and leave.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) {
  const orders = JSON.parse(process.argv[2]!) as Orders;
  const reply = (message: FromChild) => process.send!(message, () => process.disconnect());
  if (orders.job === 'sample') {
    reply({
      type: 'samples',
      report: await sample(orders, () => process.send!({ type: 'measuring' } satisfies FromChild)),
    });
  } else {
    let stop = false;
    process.on('message', (message: ToChild) => {
      if (message.type === 'stop') stop = true;
    });
    const walking = walk(orders, () => stop);
    process.send({ type: 'walking' } satisfies FromChild);
    reply({ type: 'report', report: await walking });
  }
}
