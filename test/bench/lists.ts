import { deposit } from '../../lib/ledger/deposit.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { expectStatus, newBenchPlatform, type BenchPlatform } from './client.js';
import {
  LISTS,
  PAGE,
  sampleInChild,
  startListingProcess,
  type List,
  type SampleOrders,
  type SampleReport,
  type WalkReport,
} from './client-process.js';
import { seedPlatform } from './seed.js';
import { benchCtx, type DynamoMeter } from './stack.js';
import type { Settling } from './jvm-warmup.js';
import { median, ownCpuMs, processCpuMs } from './stats.js';
import { randomUUID } from 'node:crypto';
import { runAdmin } from '../../infra/ops/cli.js';
import type { RateLimit } from '../../lib/domain/rate-limits.js';

/**
 * List scaling and tenant isolation (docs/performance.md): page 1 (100 records) of each list at a small and a large
 * history of one platform, seeded through the store's own item builders in parallel batches (seed.ts,
 * not through HTTP); then another platform's GET /accounts while the large one lists on many connections.
 */

export interface ListScaleRow {
  list: List;
  records: number;
  p50: number;
  readUnits: number;
  count: number | null;
}

export interface ListScaling {
  rows: ListScaleRow[];
  /** Seconds the seeding of each size took, all lists together. */
  seedSeconds: Record<number, number>;
  /** The platform with the large history, for the isolation scenario. */
  large: BenchPlatform;
  pageRatioMax: number;
  readUnitsRatioMax: number;
}

type PageFigures = { p50: number; readUnits: number; count: number | null };

/**
 * Page 1 of `list` on each platform, `samples` requests each, alternating request by request (which goes first
 * alternating too), so that a stretch of noise on the shared machine falls on both sizes alike rather than on
 * whichever was being measured then (docs/performance.md, "Lists at 100,000 records").
 */
async function measurePages(
  platforms: readonly BenchPlatform[],
  meter: DynamoMeter,
  list: List,
  samples: number,
): Promise<PageFigures[]> {
  const seen = platforms.map(() => ({ latencies: [] as number[], readUnits: 0, count: null as number | null }));
  // A few requests first: the first calls of a handler pay for compiling its code, at whichever size is first.
  for (const platform of platforms)
    for (let i = 0; i < 3; i++) expectStatus(await platform.client.get(`${list}?${PAGE[list]}`), 200, `GET ${list}`);
  meter.readCapacity = true;
  try {
    for (let i = 0; i < samples; i++) {
      const order = platforms.map((_, at) => at);
      for (const at of i % 2 === 0 ? order : order.reverse()) {
        const before = meter.readUnits;
        const response = await platforms[at]!.client.get(`${list}?${PAGE[list]}`);
        expectStatus(response, 200, `GET ${list}`);
        seen[at]!.latencies.push(response.ms);
        seen[at]!.readUnits += meter.readUnits - before;
        seen[at]!.count = response.body.count;
      }
    }
  } finally {
    meter.readCapacity = false;
  }
  // The API key read of the signature check is the same at any size; it is part of the request's cost.
  return seen.map((one) => ({ p50: median(one.latencies), readUnits: one.readUnits / samples, count: one.count }));
}

/**
 * Seeds a small and a large platform with `small` and `large` records in each list and measures page 1 of
 * every list at both sizes, interleaved.
 */
export async function measureListPages(
  baseUrl: string,
  meter: DynamoMeter,
  sizes: { small: number; large: number },
  samples: number,
  progress: (line: string) => void,
): Promise<ListScaling> {
  const rows: ListScaleRow[] = [];
  const seedSeconds: Record<number, number> = {};
  const platforms: Record<number, BenchPlatform> = {};
  // Reports a quarter of each seeded platform's trades, so their lists hold visibility entries too.
  const reporter = await createPlatform(benchCtx(), 'bench lists reporter', '0');
  for (const records of [sizes.small, sizes.large]) {
    const platform = await newBenchPlatform(baseUrl, `bench lists ${records}`);
    platforms[records] = platform;
    const started = Date.now();
    await seedPlatform(
      {
        ctx: benchCtx(),
        platformCode: platform.platformCode,
        participantCode: platform.participantCode,
        reporterPlatformCode: reporter.platform_code,
      },
      records,
      progress,
    );
    seedSeconds[records] = (Date.now() - started) / 1000;
  }
  for (const list of LISTS) {
    const [small, large] = await measurePages([platforms[sizes.small]!, platforms[sizes.large]!], meter, list, samples);
    rows.push({ list, records: sizes.small, ...small! }, { list, records: sizes.large, ...large! });
  }
  const ratio = (pick: (row: ListScaleRow) => number) =>
    Math.max(
      ...LISTS.map((list) => {
        const small = rows.find((row) => row.list === list && row.records === sizes.small)!;
        const large = rows.find((row) => row.list === list && row.records === sizes.large)!;
        return pick(large) / pick(small);
      }),
    );
  return {
    rows,
    seedSeconds,
    large: platforms[sizes.large]!,
    pageRatioMax: ratio((row) => row.p50),
    readUnitsRatioMax: ratio((row) => row.readUnits),
  };
}

export interface Isolation {
  connections: number;
  lists: readonly List[];
  idleP50: number;
  loadedP50: number;
  ratio: number;
  samples: number;
  /** The other platform's requests under load that did not answer 200 (their time is still a sample). */
  loadedFailures: number;
  /** The listing platform's pages meanwhile, per list: how many, how many not 200 (and the first such answer), p50. */
  listing: { list: List; pages: number; failures: number; p50: number }[];
  firstListingFailure: string | null;
  listPerSecond: number;
  /** Cores in use while idle and while listing: DynamoDB Local and this process (the server); the two clients while listing. */
  cpu: { idle: CpuShare; loaded: CpuShare; listingClientCores: number; measuredClientCores: number };
  /** How long each phase ran unmeasured until DynamoDB Local's JIT settled. */
  warmUp: { idle: Settling; loaded: Settling };
}

/** Cores a window of the scenario kept busy: CPU time over wall time (null where /proc can't be read). */
export interface CpuShare {
  dynamoCores: number | null;
  serverCores: number;
}

/**
 * The measured platform's samples (a client process of its own), with the cores DynamoDB Local and this
 * process (the server: both clients are processes of their own) kept busy while they were taken.
 */
async function sampleWithCpu(orders: SampleOrders): Promise<{ report: SampleReport; cpu: CpuShare }> {
  let started = 0;
  let dynamo: number | null = null;
  let own = 0;
  const report = await sampleInChild(orders, () => {
    started = performance.now();
    dynamo = processCpuMs(orders.dynamoPid);
    own = ownCpuMs();
  });
  const wallMs = performance.now() - started;
  const dynamoNow = processCpuMs(orders.dynamoPid);
  return {
    report,
    cpu: {
      dynamoCores: dynamo === null || dynamoNow === null ? null : (dynamoNow - dynamo) / wallMs,
      serverCores: (ownCpuMs() - own) / wallMs,
    },
  };
}

/**
 * Another platform's GET /accounts, one request at a time: `samples` while nothing else runs, then
 * `samples` while `lister` walks its lists (cursor after cursor, five pages a list, list after list) on
 * `connections` connections at once, each phase measured once DynamoDB Local's JIT has settled on its load
 * (jvm-warmup.ts). Both platforms are client processes of their own (client-process.ts); this process only
 * serves. The ratio of the two p50s is isolation_ratio. A request
 * the overloaded service refuses (a 503 after a DynamoDB timeout) is counted, not fatal: it is the finding.
 */
export async function measureIsolation(
  baseUrl: string,
  lister: BenchPlatform,
  connections: number,
  samples: number,
  dynamoPid: number | undefined,
  lists: readonly List[] = LISTS,
): Promise<Isolation> {
  const other = await newBenchPlatform(baseUrl, 'bench isolation');
  // A small platform: its own participant with a few accounts.
  for (let i = 0; i < 20; i++) {
    await deposit(benchCtx(), {
      reference: randomUUID(),
      participantCode: other.participantCode,
      asset: 'USD',
      amount: '10',
      accountLabel: `iso${i}`,
    });
  }
  // The measured platform is a client process of its own too, warmed up before each phase (client-process.ts).
  const sampling = {
    baseUrl,
    credentials: other.client.credentials,
    path: '/accounts?page_size=100',
    samples,
    dynamoPid,
  };
  const { report: idle, cpu: idleCpu } = await sampleWithCpu(sampling);
  if (idle.failures) throw new Error(`GET /accounts (other platform, idle): ${idle.firstFailure}`);

  // The listing platform is a client process of its own (client-process.ts), as another company's would be.
  const listing = await startListingProcess({ baseUrl, credentials: lister.client.credentials, lists, connections });
  let loaded: SampleReport;
  let loadedCpu: CpuShare;
  let walked: WalkReport;
  try {
    ({ report: loaded, cpu: loadedCpu } = await sampleWithCpu(sampling));
  } finally {
    walked = await listing.stop();
  }
  const idleP50 = median(idle.latencies);
  const loadedP50 = median(loaded.latencies);
  const pages = lists.map((list) => {
    const seen = walked.pages[list] ?? { latencies: [], failures: 0 };
    return { list, pages: seen.latencies.length, failures: seen.failures, p50: median(seen.latencies) };
  });
  return {
    connections,
    lists,
    idleP50,
    loadedP50,
    ratio: loadedP50 / idleP50,
    samples,
    loadedFailures: loaded.failures,
    listing: pages,
    firstListingFailure: walked.firstFailure,
    listPerSecond: pages.reduce((sum, entry) => sum + entry.pages, 0) / walked.seconds,
    cpu: {
      idle: idleCpu,
      loaded: loadedCpu,
      listingClientCores: walked.cpuMs / 1000 / walked.seconds,
      measuredClientCores: loaded.cpuMs / 1000 / loaded.seconds,
    },
    warmUp: { idle: idle.warmUp, loaded: loaded.warmUp },
  };
}

/** `rounds` runs of `measure`, and the run whose ratio is their median (one run can't decide the goal). */
export async function medianOfRounds(
  rounds: number,
  measure: (round: number) => Promise<Isolation>,
): Promise<{ runs: Isolation[]; median: Isolation }> {
  const runs: Isolation[] = [];
  for (let round = 0; round < rounds; round++) runs.push(await measure(round));
  const sorted = [...runs].sort((a, b) => a.ratio - b.ratio);
  return { runs, median: sorted[Math.floor((sorted.length - 1) / 2)]! };
}

/**
 * The flood row (flood_isolation_ratio): the quiet platform's GET /accounts, idle and then while another platform sends GET
 * /accounts on `connections` connections far past the limit ops set for it (`platform limits`): its
 * requests over the limit are answered 429 (counted as the listing's failures) without reaching a use case.
 */
export async function measureFloodIsolation(
  baseUrl: string,
  connections: number,
  samples: number,
  dynamoPid: number | undefined,
  limit: RateLimit,
): Promise<Isolation & { limit: RateLimit }> {
  const flooder = await newBenchPlatform(baseUrl, 'bench flood');
  await runAdmin(
    [
      'platform',
      'limits',
      '--platform',
      flooder.platformCode,
      '--rps',
      String(limit.rps),
      '--burst',
      String(limit.burst),
      '--reason',
      'bench: a platform flooding past its limit',
    ],
    { ctx: benchCtx() },
  );
  return { ...(await measureIsolation(baseUrl, flooder, connections, samples, dynamoPid, ['/accounts'])), limit };
}
