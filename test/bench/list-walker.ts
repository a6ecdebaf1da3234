import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ApiKeyCredentials } from '../../lib/store/api-keys.js';
import { SignedClient, type BenchResponse } from './signed-client.js';
import { ownCpuMs } from './stats.js';

/**
 * The listing platform of the isolation scenario (lists.ts), as a client process of its own.
 *
 * A platform that lists hard is another company's machine: its HTTP client, signing and JSON parsing cost
 * the service nothing. Run inside the benchmark's process, that client work shared the event loop with the
 * server under test, and the other platform's requests waited for it too, which no deployment would see. So
 * the walkers run here, in a child process that the benchmark forks with its own loader flags (tsx), and
 * talk to the service over HTTP only. The child is told what to walk on start, walks until it is told to
 * stop (an IPC message), answers with what it saw, and exits.
 */

/** Every cursor list of the API, each with its page-size parameter (the payments list keeps the spec's `size`). */
export const LISTS = ['/transfers', '/trades', '/accounts', '/participants', '/payments/status', '/movements', '/withdrawals/requests'] as const;
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

type ToChild = { type: 'stop' };
type FromChild = { type: 'walking' } | { type: 'report'; report: WalkReport };

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
        const response: BenchResponse = await client.get(`${list}?${PAGE[list]}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
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

export interface ListingProcess {
  /** Tells the child to stop; resolves with its report once every walker has finished its request in flight. */
  stop(): Promise<WalkReport>;
}

/** Forks the listing client and resolves once it is walking. */
export function startListingProcess(orders: WalkOrders): Promise<ListingProcess> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(orders)], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let report: Promise<WalkReport> | undefined;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the listing process exited (${code}) before reporting`))));
  exited.catch(() => undefined);
  const next = (type: FromChild['type']) =>
    Promise.race([
      new Promise<FromChild>((resolve) => {
        const listen = (message: FromChild) => {
          if (message.type !== type) return;
          child.off('message', listen);
          resolve(message);
        };
        child.on('message', listen);
      }),
      exited,
    ]);
  return next('walking').then(() => ({
    stop() {
      report ??= (async () => {
        const answer = next('report');
        child.send({ type: 'stop' } satisfies ToChild);
        const message = await answer;
        return (message as Extract<FromChild, { type: 'report' }>).report;
      })();
      return report;
    },
  }));
}

// Run as the child: walk as ordered until the parent says stop, then report and leave.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) {
  const orders = JSON.parse(process.argv[2]!) as WalkOrders;
  let stop = false;
  process.on('message', (message: ToChild) => {
    if (message.type === 'stop') stop = true;
  });
  const walking = walk(orders, () => stop);
  process.send({ type: 'walking' } satisfies FromChild);
  const report = await walking;
  process.send({ type: 'report', report } satisfies FromChild, () => process.disconnect());
}
