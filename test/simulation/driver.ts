import { randomUUID } from 'node:crypto';
import { runsAs } from '../support/functions.js';
import type { IncomingMessage } from 'node:http';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { ensureTables, freePort, startDynamoLocal, type LocalDynamo } from '../../infra/local/dynamodb.js';
import { enforce } from '../../infra/local/iam/enforcement.js';
import { type DeployedRoles, deployedRolesInChild } from '../../infra/local/iam/roles.js';
import { startHttpServer } from '../../infra/local/server.js';
import { startLocalWebhooks, type LocalWebhooks } from '../../infra/local/webhook-runtime.js';
import { startLocalWorkflows, type LocalWorkflows } from '../../infra/local/workflow-runner.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { bind as bindBankEventsModule } from '../../functions/payments/apply-bank-event.js';
const bindBankEvents = runsAs('functions/payments/apply-bank-event.ts', bindBankEventsModule);
import { bind as bindCustodyEventsModule } from '../../functions/withdrawals/apply-custody-event.js';
const bindCustodyEvents = runsAs('functions/withdrawals/apply-custody-event.ts', bindCustodyEventsModule);
import type { AppContext } from '../../lib/context.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { runLedgerCheck } from '../../lib/reconciliation/run-ledger-check.js';
import { settlementInputFor } from '../../lib/settlement/start-settlement.js';
import { attemptSettlement } from '../../lib/settlement/settle-trade.js';
import { resumeDistribution } from '../../lib/awards/distribute-awards.js';
import { ServiceUnavailableError, ValidationError } from '../../lib/domain/errors.js';
import type { Trade } from '../../lib/domain/trade.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { createApiKey } from '../../lib/store/api-keys.js';
import { PERMISSION_AREAS } from '../../lib/domain/caller.js';
import { getPayment } from '../../lib/store/payments.js';
import { getDistribution, listOpenDistributions } from '../../lib/store/awards.js';
import { createPlatform } from '../../lib/store/platforms.js';
import { eventEntity } from '../../lib/store/entities/event.js';
import { getTrade, TradeStateChangedError, tradeUpdateItems, updateTrade } from '../../lib/store/trades.js';
import { QUEUED_GRACE_MS } from '../../lib/store/webhook-deliveries.js';
import { LEASE_MS } from '../../lib/webhooks/deliver-webhook.js';
import { TestClock } from '../support/clock.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { isTransient, OPERATION_HEADER, PlatformClient, type Answer, type SignedRequest } from './client.js';
import { FaultInjector, SimulatedCrash, type FaultRates, type InjectedFault } from './faults.js';
import {
  buyByQuantity,
  buyByTotal,
  convertByQuantity,
  fieldDiffers,
  holding,
  Net,
  NETWORK_FEES,
  netOfLegs,
  REFERENCE_PRICES,
  SPREAD_BPS,
  tradeNotional,
  amount,
  type Amount,
  type QuoteModel,
  type StoredLeg,
} from './model.js';
import { SIGNATURE_WINDOW_SECONDS } from '../../lib/http/middleware/verify-signature.js';
import { generateOperations, type Operation, type OperationKind, type Party } from './generator.js';
import { AnswerLedger, negativeBalance, type BalanceChange, type Violation } from './invariants.js';
import { keyedDraw } from './prng.js';
import { cleanClient, customerBody, inFlight, SIM_INDEX_LAG_MS, scanTable, simulationContext } from './world.js';

/**
 * The seeded simulation (docs/simulation.md): the operations drawn from the seed run against the
 * real handlers (`npm start`'s HTTP server, workflow runner and webhook runtime, the bank and custody queue
 * consumers) on DynamoDB Local, with the seeded faults on; then faults stop, everything drains, and the
 * invariants are checked.
 *
 * The sharper checks, each seen failing on a bug planted in the money paths (one run of seed 20261128
 * with 150 operations each, the plant reverted after):
 * - `amounts match the model` (model.ts): the network fee rounded before it was priced
 *   (`roundToAsset(fee, quoted).mul(price)` in lib/domain/quotes.ts): every convert quote's fee 0.00 and
 *   its total 5.01 EUR short, and each such booking's EUR leg.
 * - `a replayed signature is refused`: the signature cache letting a POST through under any X-Request-Id
 *   (lib/http/middleware/verify-signature.ts): a resent transfer booked again (201) under another id.
 * - `a client id books once`: the client_transfer_id claim left out of the transfer's transaction.
 * - `a locked participant's booking is refused`: the participant-active check left out of the quote
 *   execution's transaction (lib/liquidity/execute-quote.ts): a locked customer's quote executed (200).
 * - `ledger check` (negative_balance) and `no guarded balance below zero`: the debit guard broken
 *   (lib/ledger/batch.ts `isGuarded`): a customer account at -41,976.97.
 * - `a stale settlement write is refused`: the trade update no longer conditioned on the state it read
 *   (lib/store/trades.ts, its assertion removed too; with the assertion in place the engine refuses the
 *   write itself): every reported trade's stale session record went through after it terminated.
 * `trade state matches the ledger` and `payment state matches the ledger` were not seen failing on a plant of
 * their own: a stale default is still stopped by the trade's status-sequence condition, and a bank event
 * applied twice by the movement id it derives from the payment.
 */

export interface SimulationOptions {
  seed: number;
  ops: number;
  /** A DynamoDB Local to use (tests: the suite's); otherwise one is started, in memory, for the run. */
  endpoint?: string;
  /** Tables of the run's own (created if missing); the checks read the whole main table. */
  tables?: { main: string; ttl: string };
  /** Operations in flight at once. */
  concurrency?: number;
  platforms?: number;
  customersPerPlatform?: number;
  rates?: FaultRates;
  /** Progress lines (the CLI prints them). */
  log?: (line: string) => void;
  /** The functions' deployed roles every handler runs under (tests: the suite's); otherwise read from the stack. */
  roles?: DeployedRoles;
}

export interface SimulationSummary {
  seed: number;
  ops: number;
  elapsed_ms: number;
  operations: Record<string, Record<string, number>>;
  faults: Record<string, number>;
  invariants: Record<string, number>;
  ledger_check: { items_scanned: number; accounts_checked: number; movements_checked: number; balance_events: number };
}

/** A run that broke an invariant: what to replay it with. */
export class SimulationFailure extends Error {
  constructor(
    readonly seed: number,
    readonly op: number | undefined,
    readonly violations: Violation[],
    readonly faultsSoFar: InjectedFault[],
    readonly summary: SimulationSummary,
  ) {
    const first = violations[0]!;
    super(
      [
        `simulation failed: seed ${seed}, operation ${op ?? '(after the run)'}: [${first.invariant}] ${first.message}`,
        `replay: npm run simulate -- --seed ${seed} --ops ${summary.ops}`,
        `${violations.length} violation(s):`,
        ...violations.slice(0, 20).map((v) => `  op ${v.op ?? '-'} [${v.invariant}] ${v.message}`),
        `faults injected up to then (${faultsSoFar.length}): ${JSON.stringify(countKinds(faultsSoFar))}`,
        ...faultsSoFar.slice(-15).map((f) => `  ${f.kind} in ${f.scope} at ${f.at}`),
      ].join('\n'),
    );
    this.name = 'SimulationFailure';
  }
}

function countKinds(faults: readonly InjectedFault[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const fault of faults) counts[fault.kind] = (counts[fault.kind] ?? 0) + 1;
  return counts;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ETH_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
/** A request still unanswered after this (retrying all along) breaks liveness. */
const ANSWER_DEADLINE_MS = 120_000;
const DRAIN_DEADLINE_MS = 180_000;
/**
 * A drain with events missing and none arriving for this long is waiting on time alone: a delivery a crashed
 * worker held (its lease) or a queue message a fault lost (the grace before the sweep takes it over). The
 * run's clock then moves on by `STUCK_DELIVERY_MS`, so the sweep recovers them as it would on AWS a minute
 * later, without the run waiting that minute in real time.
 */
const DRAIN_STALL_MS = 3_000;
const STUCK_DELIVERY_MS = Math.max(LEASE_MS, QUEUED_GRACE_MS) + 1_000;

interface SimPlatform {
  code: string;
  participant: string;
  customers: string[];
  client: PlatformClient;
  endpointCreatedAtMs: number;
}

/** A request sent through the API whose answer a replay may ask for again. */
interface Sent {
  op: number;
  platform: number;
  path: string;
  text: string;
  requestId: string;
  /** The bytes and signing headers of the attempt that got the 2xx. */
  signed: SignedRequest;
}

/** What an accepted operation must have booked (the reference model's), found by its movements' reference. */
interface Expectation {
  op: number;
  what: string;
  /** The movements: this exact reference, or (`prefix`) every reference starting with it. */
  reference: string;
  prefix?: boolean;
  net: Net;
  /** Compare only the holdings of these assets (the others the model doesn't price). */
  assets?: string[];
}

/** A reported trade's terms: what its settlement movement must move, if it settled. */
interface ReportedTrade {
  op: number;
  buyer: string;
  seller: string;
  quantity: string;
  price: string;
}

export async function simulate(options: SimulationOptions): Promise<SimulationSummary> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const shape = { platforms: options.platforms ?? 3, customersPerPlatform: options.customersPerPlatform ?? 12 };
  const operations = generateOperations(options.seed, options.ops, shape);
  const injector = new FaultInjector(options.seed, options.rates);
  injector.active = false;

  let dynamo: LocalDynamo | undefined;
  let workflows: LocalWorkflows | undefined;
  let webhooks: LocalWebhooks | undefined;
  let http: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  const receiver = new WebhookReceiver();
  // Read from the stack's constructs in a child process while DynamoDB Local starts (awaited below).
  const roles = options.roles ? Promise.resolve(options.roles) : deployedRolesInChild();
  roles.catch(() => undefined);
  try {
    dynamo = options.endpoint ? undefined : await startDynamoLocal({ port: await freePort() });
    // A run stopped by a signal exits without its finally: its DynamoDB Local must not outlive it.
    const child = dynamo?.process;
    if (child) process.once('exit', () => child.kill('SIGKILL'));
    const endpoint = options.endpoint ?? dynamo!.endpoint;
    const tables = options.tables ?? { main: 'sim-main', ttl: 'sim-windows' };
    await ensureTables(endpoint, tables);
    const clock = new TestClock();
    // Every handler runs under its function's deployed role (infra/local/iam): a missing grant is a 5xx here too.
    const base = enforce(simulationContext(endpoint, tables, injector, clock), await roles);
    // Failed tasks retried quickly (the definition's own Retry, shortened as the tests do), so a run drains in seconds.
    workflows = await startLocalWorkflows(base, {
      resume: false,
      sweepIntervalMs: 2_000,
      definition: { retry: { intervalSeconds: 1, maxAttempts: 10, backoffRate: 1.5, maxDelaySeconds: 3 } },
    });
    const ctx = workflows.ctx;
    const run = new Run(options.seed, ctx, injector, log);
    receiver.reply = (entry) => run.receive(entry);
    await receiver.start();
    webhooks = await startLocalWebhooks(ctx, {
      pollIntervalMs: 100,
      sweepIntervalMs: 1_000,
      wrapDispatcher: injector.wrapDispatcher,
      wrapWorker: injector.wrapWorker,
    });
    http = await startHttpServer(ctx, 0, '127.0.0.1', { around: (request, handle) => run.around(request, handle) });
    await run.setUp(http.baseUrl, receiver.url, shape);
    log(
      `seed ${options.seed}: ${operations.length} operations on ${shape.platforms} platforms, ${shape.customersPerPlatform} customers each`,
    );

    injector.active = true;
    // SIM_SLOW: besides operations over 5 s, report the event loop held up and the service's DynamoDB calls
    // in flight for over 3 s (requests queued behind DynamoDB Local's table lock show there).
    const watches: NodeJS.Timeout[] = [];
    if (process.env.SIM_SLOW) {
      let expected = Date.now() + 250;
      let stuckReports = 0;
      watches.push(
        setInterval(() => {
          const lag = Date.now() - expected;
          if (lag > 1_000) log(`  event loop blocked ${lag} ms`);
          expected = Date.now() + 250;
          const stuck = [...inFlight].filter((call) => Date.now() - call.startedMs > 3_000);
          if (stuck.length > 0 && ++stuckReports % 8 === 1)
            log(
              `  ${stuck.length} DynamoDB calls in flight over 3 s (of ${inFlight.size}): ${stuck
                .slice(0, 3)
                .map(
                  (call) =>
                    `${call.command} ${Date.now() - call.startedMs} ms ${JSON.stringify(call.input).slice(0, 300)}`,
                )
                .join(' | ')}`,
            );
        }, 250),
      );
    }
    await run.operate(operations, options.concurrency ?? 12);
    for (const watch of watches) clearInterval(watch);
    injector.active = false;
    const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);
    log(`seed ${options.seed}: operations done in ${seconds(started)} s; draining`);
    const draining = Date.now();
    await run.drain(workflows, webhooks, clock);
    log(`seed ${options.seed}: drained in ${seconds(draining)} s; checking`);
    const checking = Date.now();
    await run.check(endpoint, tables.main);
    log(`seed ${options.seed}: checked in ${seconds(checking)} s`);
    const summary = run.summary(options.ops, Date.now() - started);
    if (run.violations.length > 0) {
      const first = run.violations[0]!;
      const faultsSoFar =
        first.op === undefined
          ? injector.log
          : injector.log.filter((fault) => fault.op === undefined || fault.op <= first.op!);
      throw new SimulationFailure(options.seed, first.op, run.violations, faultsSoFar, summary);
    }
    return summary;
  } finally {
    injector.active = false;
    if (http) {
      http.server.closeAllConnections();
      await new Promise((resolve) => http!.server.close(resolve));
    }
    await webhooks?.stop();
    await workflows?.stop();
    await receiver.stop();
    await dynamo?.stop();
  }
}

/** How many more times the drain resumes a distribution both racing resumes left open (each may meet a fault). */
const RESUMES_AFTER_RACE = 10;

class Run {
  readonly violations: Violation[] = [];
  private readonly answers = new AnswerLedger();
  private readonly outcomes = new Map<string, Map<string, number>>();
  private readonly invariantCounts = {
    answers_replayed: 0,
    balance_changes: 0,
    events_delivered: 0,
    settlements_terminal: 0,
    one_booking_per_id: 0,
    five_xx_allowed: 0,
    amounts_modelled: 0,
    movements_modelled: 0,
    trades_matched_to_ledger: 0,
    payments_matched_to_ledger: 0,
    signed_resends: 0,
    client_ids_reused: 0,
    locked_refusals: 0,
    locked_quotes_expired: 0,
    duplicate_workers: 0,
    stale_writes_refused: 0,
  };
  private readonly expectations: Expectation[] = [];
  private readonly tradeTerms = new Map<string, ReportedTrade>();
  /** Each reported trade as a worker read it early on: written again after it settled, it must be refused. */
  private readonly staleTrades = new Map<string, { op: number; trade: Trade }>();
  /** Duplicate workers started beside an operation, awaited before the drain. */
  private readonly duplicates: Promise<void>[] = [];
  /** Every award distribution asked for, by request id: what it must pay once it completes. */
  private readonly distributions = new Map<string, { op: number; net: Net }>();
  /** Customers locked now, and how many times each was locked so far (a lock that came and went meanwhile). */
  private readonly lockedNow = new Set<string>();
  private readonly lockCounts = new Map<string, number>();
  /** Lock operations on one customer run one after another (an unlock must not end another's lock). */
  private readonly lockChains = new Map<string, Promise<unknown>>();
  private platforms: SimPlatform[] = [];
  private readonly sent: Sent[] = [];
  private readonly payments: { id: string; chain: Promise<unknown> }[] = [];
  private readonly withdrawals: { id: string; chain: Promise<unknown> }[] = [];
  private readonly deposits: { op: number; request: Parameters<typeof deposit>[1] }[] = [];
  private readonly reportedTrades = new Set<string>();
  private readonly transferRequests = new Set<string>();
  private readonly clientTransferIds = new Set<string>();
  private readonly clientTradeIds = new Set<string>();
  /** 2xx receipts by `platform event-id`. */
  private readonly delivered = new Set<string>();
  private readonly receives = new Map<string, number>();
  private readonly bankConsumer;
  private readonly custodyConsumer;
  private ledgerReport: SimulationSummary['ledger_check'] = {
    items_scanned: 0,
    accounts_checked: 0,
    movements_checked: 0,
    balance_events: 0,
  };

  constructor(
    private readonly seed: number,
    private readonly ctx: AppContext,
    private readonly injector: FaultInjector,
    private readonly log: (line: string) => void,
  ) {
    this.bankConsumer = bindBankEvents(ctx);
    this.custodyConsumer = bindCustodyEvents(ctx);
  }

  violate(invariant: string, op: number | undefined, message: string): void {
    this.violations.push({ invariant, op, message });
    if (this.violations.length === 1)
      this.log(`VIOLATION (seed ${this.seed}, op ${op ?? '-'}) [${invariant}] ${message}`);
  }

  private outcome(kind: string, result: string): void {
    const byResult = this.outcomes.get(kind) ?? new Map<string, number>();
    byResult.set(result, (byResult.get(result) ?? 0) + 1);
    this.outcomes.set(kind, byResult);
  }

  /** The server's hook: a request's DynamoDB calls belong to the operation and attempt its header names. */
  around(request: IncomingMessage, handle: () => Promise<void>): Promise<void> {
    const tag = request.headers[OPERATION_HEADER];
    const match = typeof tag === 'string' ? /^(\d+)\.(\d+)$/.exec(tag) : null;
    return match ? this.injector.inOperation(Number(match[1]), Number(match[2]), handle) : handle();
  }

  /** The webhook receiver: fails at random (seeded by event and attempt), checks every balance change it is told of. */
  receive(entry: { headers: Record<string, unknown>; body: string }): { status: number } | 'reset' {
    const id = String(entry.headers['webhook-id'] ?? '');
    let envelope: { platform_code?: string; type?: string; data?: BalanceChange };
    try {
      envelope = JSON.parse(entry.body);
    } catch {
      return { status: 400 };
    }
    const key = `${envelope.platform_code} ${id}`;
    const n = (this.receives.get(key) ?? 0) + 1;
    this.receives.set(key, n);
    const draw = keyedDraw(this.seed, `receiver ${key} ${n}`);
    if (draw < 0.1) return { status: 500 };
    if (draw < 0.15) return 'reset';
    if (envelope.type === 'account_balance.changed' && envelope.data) {
      const problem = negativeBalance(envelope.data);
      if (problem) this.violate('no guarded balance below zero', undefined, `delivered event ${id}: ${problem}`);
    }
    this.delivered.add(key);
    return { status: 204 };
  }

  async setUp(
    baseUrl: string,
    hookUrl: string,
    shape: { platforms: number; customersPerPlatform: number },
  ): Promise<void> {
    const admin = (args: string[]) => runAdmin([...args, '--reason', 'simulation'], { ctx: this.ctx });
    for (const [underlying, quoted, price] of REFERENCE_PRICES) {
      await admin([
        'price',
        'set',
        '--underlying',
        underlying,
        '--quoted-currency',
        quoted,
        '--price',
        price,
        '--force',
      ]);
    }
    await admin(['fee', 'set', '--asset', 'ETH', '--quantity', NETWORK_FEES.ETH]);
    for (let p = 0; p < shape.platforms; p++) {
      const platform = await createPlatform(this.ctx, `simulated platform ${p}`, SPREAD_BPS);
      const credentials = await createApiKey(this.ctx, platform.platform_code, PERMISSION_AREAS);
      const client = new PlatformClient(baseUrl, credentials, this.ctx.clock);
      const endpointCreatedAtMs = this.ctx.clock.nowMs();
      const endpoint = await client.send(
        'POST',
        '/webhooks/endpoints',
        { url: `${hookUrl}/${platform.platform_code}`, description: 'simulation' },
        -1,
        1,
      );
      if (endpoint.status !== 200 && endpoint.status !== 201)
        throw new Error(`set-up: webhook endpoint ${endpoint.status} ${endpoint.text}`);
      const customers: string[] = [];
      for (let c = 0; c < shape.customersPerPlatform; c++) {
        const created = await client.send(
          'POST',
          '/participants/customers/new',
          customerBody(`sim.${randomUUID()}@example.com`, this.ctx.clock.nowMs()),
          -1,
          1,
        );
        if (created.status !== 201) throw new Error(`set-up: customer ${created.status} ${created.text}`);
        customers.push(JSON.parse(created.text).message.participant_code);
      }
      this.platforms.push({
        code: platform.platform_code,
        participant: platform.participant_code,
        customers,
        client,
        endpointCreatedAtMs,
      });
      const fund = (participantCode: string, asset: string, amount: string, accountLabel?: string) =>
        deposit(this.ctx, { reference: `setup-${randomUUID()}`, participantCode, asset, amount, accountLabel });
      await fund(platform.participant_code, 'USD', '40000');
      await fund(platform.participant_code, 'USD', '3000', 'ach_clearing');
      await fund(platform.participant_code, 'EUR', '20000');
      for (const customer of customers) {
        await fund(customer, 'USD', '500');
        await fund(customer, 'BTC', '0.05');
      }
    }
  }

  /** Runs the operations in order, `concurrency` at a time. */
  async operate(operations: Operation[], concurrency: number): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < operations.length) {
        const index = next++;
        const operation = operations[index]!;
        let result: string;
        const startedMs = Date.now();
        try {
          result = await this.perform(index, operation);
          if (Date.now() - startedMs > 5_000 && process.env.SIM_SLOW)
            this.log(
              `  slow op ${index} ${operation.kind} ${result}: ${Date.now() - startedMs} ms, faults ${JSON.stringify(this.injector.faultsOf(index).map((f) => `${f.scope}:${f.kind}@${f.at}`))}`,
            );
        } catch (error) {
          result = 'error';
          this.violate('operation completes', index, `${operation.kind}: ${(error as Error).stack ?? error}`);
        }
        this.outcome(operation.kind, result);
        if ((index + 1) % 1000 === 0)
          this.log(`  ${index + 1} operations started, ${this.injector.log.length} faults so far`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }

  private party(platform: SimPlatform, party: Party): { code: string; label: string } {
    return {
      code: party.customer === null ? platform.participant : platform.customers[party.customer]!,
      label: party.label,
    };
  }

  /**
   * Sends one request until it gets a definitive answer (the client's retries: same id, same bytes), checking
   * each answer: 5xx only where faults explain them, and every answer to an id after its first 2xx that same 2xx.
   */
  private async request(
    op: number,
    platformIndex: number,
    method: string,
    path: string,
    body: unknown,
    requestId?: string,
    text?: string,
    reusedId = false,
  ): Promise<Answer> {
    const platform = this.platforms[platformIndex]!;
    const bodyText = text ?? (body === undefined ? undefined : JSON.stringify(body));
    const deadline = Date.now() + ANSWER_DEADLINE_MS;
    for (let attempt = 1; ; attempt++) {
      let answer: Answer;
      try {
        answer = await platform.client.send(method, path, undefined, op, attempt, { requestId, text: bodyText });
      } catch (error) {
        throw new Error(`${method} ${path}: the server did not answer: ${(error as Error).message}`);
      }
      if (answer.status >= 500) this.checkFiveXx(op, method, path, answer);
      // A changed body under a used id is checked by its caller (422), not against the id's first answer.
      if (requestId && !reusedId && !isTransient(answer)) {
        const problem = this.answers.record(requestId, op, answer);
        if (problem) this.violate('every retry answered as the first', op, problem);
      }
      if (!isTransient(answer)) {
        if (
          requestId &&
          !reusedId &&
          method === 'POST' &&
          bodyText !== undefined &&
          answer.status >= 200 &&
          answer.status < 300
        ) {
          this.sent.push({ op, platform: platformIndex, path, text: bodyText, requestId, signed: answer.signed });
        }
        return answer;
      }
      if (Date.now() > deadline)
        throw new Error(
          `${method} ${path} (request ${requestId ?? '-'}) still unanswered after ${ANSWER_DEADLINE_MS} ms: ${answer.status} ${answer.text}`,
        );
      await sleep(
        Math.min(1000, 25 * 2 ** Math.min(attempt, 6)) * (0.5 + keyedDraw(this.seed, `backoff ${op} ${attempt}`) / 2),
      );
    }
  }

  private checkFiveXx(op: number, method: string, path: string, answer: Answer): void {
    const faults = this.injector.faultsOf(op, answer.attempt);
    const during = this.injector.active;
    if (answer.status === 503 && answer.retryAfter && during) {
      this.invariantCounts.five_xx_allowed += 1;
      return;
    }
    if (answer.status === 500 && faults.some((fault) => fault.kind.startsWith('crash'))) {
      this.invariantCounts.five_xx_allowed += 1;
      return;
    }
    this.violate(
      'no 5xx but the faults’ own',
      op,
      `${method} ${path} answered ${answer.status} ${answer.text.slice(0, 300)} (faults in this attempt: ${JSON.stringify(faults.map((f) => `${f.kind}@${f.at}`))}${during ? '' : '; faults were off'})` +
        this.injector
          .errorsOf(op, answer.attempt)
          .map((line) => `\n  the service logged: ${line}`)
          .join(''),
    );
  }

  private json(answer: Answer): any {
    try {
      return JSON.parse(answer.text);
    } catch {
      return undefined;
    }
  }

  private async perform(index: number, operation: Operation): Promise<string> {
    switch (operation.kind) {
      case 'transfer':
        return this.transfer(index, operation);
      case 'execute':
        return this.execute(index, operation);
      case 'reward': {
        const platform = this.platforms[operation.platform]!;
        const body = {
          underlying: operation.underlying,
          quoted_currency: 'USD',
          total: operation.total,
          participant_code: platform.customers[operation.customer],
        };
        const answer = await this.request(index, operation.platform, 'POST', '/rewards', body, operation.requestId);
        if (answer.status === 201) {
          const model = buyByTotal(operation.underlying, 'USD', operation.total);
          const message = this.json(answer)?.message;
          this.checkQuote(index, 'reward', message?.quote, model);
          const customer = platform.customers[operation.customer]!;
          this.expect(index, `reward ${message?.trade_id}`, `trade:${message?.trade_id}`, {
            net: new Net()
              .add(holding(platform.participant, 'general', 'USD'), model.total.negated())
              .add(holding(customer, 'general', operation.underlying), model.quantity),
          });
        }
        return this.status(answer);
      }
      case 'award_fund': {
        const platform = this.platforms[operation.platform]!;
        const answer = await this.request(
          index,
          operation.platform,
          'POST',
          '/awards/fund',
          { underlying: 'BTC', quoted_currency: 'USD', quantity: operation.quantity },
          operation.requestId,
        );
        if (answer.status === 201) {
          const model = buyByQuantity('BTC', 'USD', operation.quantity);
          const message = this.json(answer)?.message;
          this.checkQuote(index, 'award funding', message?.quote, model);
          this.expect(index, `award funding ${message?.trade_id}`, `trade:${message?.trade_id}`, {
            net: new Net()
              .add(holding(platform.participant, 'general', 'USD'), model.total.negated())
              .add(holding(platform.participant, 'awards', 'BTC'), model.quantity),
          });
        }
        return this.status(answer);
      }
      case 'award_distribute': {
        const platform = this.platforms[operation.platform]!;
        const body = {
          asset: 'BTC',
          quantity: operation.quantity,
          quoted_currency: 'USD',
          participant_codes: operation.customers.map((c) => platform.customers[c]),
        };
        const answer = await this.request(
          index,
          operation.platform,
          'POST',
          '/awards/distribute',
          body,
          operation.requestId,
        );
        // The pool pays quantity x N, each recipient gets the quantity: the escrow movement and every chunk's.
        const net = new Net().add(
          holding(platform.participant, 'awards', 'BTC'),
          amount(operation.quantity).times(operation.customers.length).negated(),
        );
        for (const c of operation.customers)
          net.add(holding(platform.customers[c]!, 'general', 'BTC'), operation.quantity);
        this.distributions.set(operation.requestId, { op: index, net });
        if (answer.status === 201) {
          this.expect(
            index,
            `award distribution ${operation.requestId}`,
            `award_distribution:${platform.code}:${operation.requestId}`,
            { net, prefix: true },
          );
          // Duplicate workers: two resumes of the finished distribution at once change nothing.
          this.beside(index, 'two resumes of one award distribution', () =>
            Promise.allSettled([
              resumeDistribution(this.ctx, platform.code, operation.requestId),
              resumeDistribution(this.ctx, platform.code, operation.requestId),
            ]),
          );
        }
        return this.status(answer);
      }
      case 'trade_report':
        return this.report(index, operation);
      case 'convert_withdraw':
        return this.convertWithdraw(index, operation);
      case 'bank_event':
        return this.bankEvent(index, operation);
      case 'custody_event':
        return this.custodyEvent(index, operation);
      case 'deposit':
        return this.opsDeposit(index, operation);
      case 'replay':
        return this.replay(index, operation);
      case 'resend':
        return this.resend(index, operation);
      case 'reuse_client_id':
        return this.reuseClientId(index, operation);
      case 'lock':
        return this.lock(index, operation);
    }
  }

  private status(answer: Answer): string {
    return String(answer.status);
  }

  private async transfer(index: number, op: Extract<Operation, { kind: 'transfer' }>): Promise<string> {
    const platform = this.platforms[op.platform]!;
    const from = this.party(platform, op.from);
    const to = this.party(platform, op.to);
    const body = {
      from_participant_code: from.code,
      from_account_label: from.label,
      to_participant_code: to.code,
      to_account_label: to.label,
      asset: op.asset,
      amount: op.amount,
      ...(op.clientTransferId && { client_transfer_id: op.clientTransferId }),
    };
    const answer = await this.request(index, op.platform, 'POST', '/transfers', body, op.requestId);
    if (answer.status === 201) {
      this.transferRequests.add(op.requestId);
      if (op.clientTransferId) this.clientTransferIds.add(op.clientTransferId);
      const id = this.json(answer)?.message?.id;
      this.expect(index, `transfer ${id}`, `transfer:${id}`, {
        net: new Net()
          .add(holding(from.code, from.label, op.asset), `-${op.amount}`)
          .add(holding(to.code, to.label, op.asset), op.amount),
      });
    }
    return this.status(answer);
  }

  private async execute(index: number, op: Extract<Operation, { kind: 'execute' }>): Promise<string> {
    const platform = this.platforms[op.platform]!;
    const query = new URLSearchParams({
      underlying: op.underlying,
      quoted_currency: 'USD',
      side: 'buy',
      total: op.total,
      participant_code: platform.customers[op.customer]!,
    });
    const quote = await this.request(index, op.platform, 'GET', `/liquidity/rfq?${query}`, undefined);
    if (quote.status !== 200) return `quote ${quote.status}`;
    const model = buyByTotal(op.underlying, 'USD', op.total);
    this.checkQuote(index, 'quote', this.json(quote)?.message, model);
    const body = {
      quote_id: this.json(quote).message.quote_id,
      ...(op.ach && {
        funding_details: { external_account_id: op.externalAccountId, description: 'SIM ORDER', bank_fee: '1.50' },
      }),
    };
    const answer = await this.request(index, op.platform, 'POST', '/liquidity/execute', body, op.requestId);
    if (answer.status === 200) {
      const tradeId = this.json(answer)?.message?.trade_id;
      const customer = platform.customers[op.customer]!;
      // An ACH buy is fronted by the platform's clearing account (docs/ledger.md); otherwise the customer pays.
      const payer = op.ach ? holding(platform.participant, 'ach_clearing', 'USD') : holding(customer, 'general', 'USD');
      this.expect(index, `execution ${tradeId}`, `trade:${tradeId}`, {
        net: new Net()
          .add(holding(customer, 'general', op.underlying), model.quantity)
          .add(payer, model.total.negated()),
      });
    }
    if (answer.status === 200 && op.ach) {
      const tradeId = this.json(answer).message.trade_id as string;
      const lookUp = () => this.request(index, op.platform, 'GET', `/payments/status?trade_id=${tradeId}`, undefined);
      let listed = await lookUp();
      // The list is an index, eventually consistent: once the longest lag has passed, the payment must show.
      if (!this.json(listed)?.message?.[0]) listed = await sleep(SIM_INDEX_LAG_MS).then(lookUp);
      const payment = this.json(listed)?.message?.[0]?.transaction_id as string | undefined;
      if (!payment)
        this.violate(
          'an ACH execution has its payment',
          index,
          `trade ${tradeId}: ${listed.status} ${listed.text.slice(0, 200)}`,
        );
      else this.payments.push({ id: payment, chain: Promise.resolve() });
    }
    return `${op.ach ? 'ach ' : ''}${answer.status}`;
  }

  private async report(index: number, op: Extract<Operation, { kind: 'trade_report' }>): Promise<string> {
    const platform = this.platforms[op.platform]!;
    const buyer = platform.customers[op.buyer]!;
    const seller = platform.customers[op.seller]!;
    if (op.funded) {
      // Each party is given what it must deliver (references from the request id: a retry books nothing twice).
      const notional = (Number(op.quantity) * 50_000).toFixed(2);
      await this.bookDeposit(index, {
        participantCode: buyer,
        asset: 'USD',
        amount: notional,
        reference: `trade-${op.requestId}-buyer`,
      });
      await this.bookDeposit(index, {
        participantCode: seller,
        asset: 'BTC',
        amount: op.quantity,
        reference: `trade-${op.requestId}-seller`,
      });
    }
    const body = {
      client_trade_id: op.clientTradeId,
      session_id: '',
      trade_reporter: 'ops@simulation.example',
      platform_code: platform.code,
      symbol: 'BTC/USD',
      product_type: 'spot',
      trade_type: 'regular',
      trade_price: '50000',
      trade_quantity: op.quantity,
      physical_delivery: true,
      transaction_timestamp: this.ctx.clock.nowMs() - 1_000,
      parties_anonymous: false,
      parties: [
        { side: 'buy', participant_code: buyer, asset: 'BTC', settling: true },
        { side: 'sell', participant_code: seller, asset: 'USD', settling: true },
      ],
    };
    const answer = await this.request(index, op.platform, 'POST', '/trades', body, op.requestId);
    if (answer.status === 200 || answer.status === 201) {
      const tradeId = this.json(answer).message.trade_id as string;
      this.reportedTrades.add(tradeId);
      this.clientTradeIds.add(op.clientTradeId);
      this.tradeTerms.set(tradeId, { op: index, buyer, seller, quantity: op.quantity, price: '50000' });
      this.beside(index, 'settlement steps of one trade at once', async () => {
        // A worker reads the trade now (a write of it after the trade settled must be refused, see `staleWrites`)...
        const read = await getTrade(this.ctx, tradeId, { consistent: true }).catch(() => undefined);
        if (read && read.trade_state !== 'terminated') this.staleTrades.set(tradeId, { op: index, trade: read });
        // ...and two settlement steps run beside the trade's own workflow.
        return Promise.allSettled([attemptSettlement(this.ctx, tradeId), attemptSettlement(this.ctx, tradeId)]);
      });
    }
    return `${op.funded ? 'funded' : 'unfunded'} ${answer.status}`;
  }

  private async convertWithdraw(index: number, op: Extract<Operation, { kind: 'convert_withdraw' }>): Promise<string> {
    const query = new URLSearchParams({
      side: 'buy',
      underlying: 'ETH',
      quoted_currency: 'EUR',
      quantity: op.quantity,
      withdrawal_address: ETH_ADDRESS,
    });
    const quote = await this.request(index, op.platform, 'GET', `/convert_withdraw/rfq?${query}`, undefined);
    if (quote.status !== 200) return `quote ${quote.status}`;
    const model = convertByQuantity('ETH', 'EUR', op.quantity);
    const quoted = this.json(quote)?.message;
    this.checkQuote(index, 'convert quote', quoted, model, model.totalNotional);
    this.checkAmounts(index, 'convert quote', [
      fieldDiffers('network_fee_quantity', model.networkFeeQuantity, quoted?.network_fee_quantity),
      fieldDiffers('network_fee_notional', model.networkFeeNotional, quoted?.network_fee_notional),
    ]);
    const answer = await this.request(
      index,
      op.platform,
      'POST',
      '/convert_withdraw/execute',
      { quote_id: this.json(quote).message.quote_id },
      op.requestId,
    );
    if (answer.status === 200) {
      this.withdrawals.push({ id: this.json(answer).message.withdrawal_request_id, chain: Promise.resolve() });
      const tradeId = this.json(answer).message.trade_id;
      const platform = this.platforms[op.platform]!;
      // The platform pays the asset's cost and the fee; what it bought goes on to the withdrawal's escrow.
      this.expect(index, `convert-withdraw ${tradeId}`, `trade:${tradeId}`, {
        net: new Net().add(holding(platform.participant, 'general', 'EUR'), model.totalNotional.negated()),
        assets: ['EUR', 'ETH'],
      });
    }
    return this.status(answer);
  }

  /** Calls outside HTTP (ops, queues) retried the way their callers retry: until they go through. */
  private async untilDone<T>(index: number, work: (attempt: number) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.injector.inOperation(index, attempt, () => work(attempt));
      } catch (error) {
        if (attempt >= 30) throw error;
        await sleep(50 * Math.min(attempt, 10));
      }
    }
  }

  private async bookDeposit(index: number, request: Parameters<typeof deposit>[1]) {
    const booking = await this.untilDone(index, () => deposit(this.ctx, request));
    this.deposits.push({ op: index, request });
    return booking;
  }

  private async opsDeposit(index: number, op: Extract<Operation, { kind: 'deposit' }>): Promise<string> {
    if (op.repeat !== null && this.deposits.length > 0) {
      const earlier = this.deposits[Math.floor(op.repeat * this.deposits.length)]!;
      const booking = await this.untilDone(index, () => deposit(this.ctx, earlier.request));
      if (!booking.already_booked)
        this.violate(
          'one booking per reference',
          index,
          `deposit ${earlier.request.reference} (op ${earlier.op}) booked again`,
        );
      return 'repeat';
    }
    const platform = this.platforms[op.platform]!;
    const participantCode = op.customer === null ? platform.participant : platform.customers[op.customer]!;
    const booking = await this.bookDeposit(index, {
      participantCode,
      asset: op.asset,
      amount: op.amount,
      reference: op.reference,
      ...(op.label && { accountLabel: op.label }),
    });
    return booking.already_booked ? 'booked (answer lost)' : 'booked';
  }

  /** A FIFO message group: one resource's events are applied one after another, in the order sent. */
  private inGroup(group: { chain: Promise<unknown> }, work: () => Promise<string>): Promise<string> {
    const result = group.chain.then(work);
    group.chain = result.catch(() => undefined);
    return result;
  }

  private sqs(body: unknown, group: string): SQSEvent {
    const messageId = randomUUID();
    return {
      Records: [
        {
          messageId,
          receiptHandle: messageId,
          body: JSON.stringify(body),
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: '1',
            SenderId: 'sim',
            ApproximateFirstReceiveTimestamp: '1',
            MessageGroupId: group,
            MessageDeduplicationId: messageId,
            SequenceNumber: '1',
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:local:000000000000:events.fifo',
          awsRegion: 'local',
        },
      ],
    };
  }

  private async bankEvent(index: number, op: Extract<Operation, { kind: 'bank_event' }>): Promise<string> {
    if (this.payments.length === 0) return 'no payment yet';
    const group = this.payments[Math.floor(op.pick * this.payments.length)]!;
    return this.inGroup(group, async () => {
      const before = await this.untilDone(index, () => getPayment(this.ctx, group.id));
      if (!before) return 'unknown payment';
      const legal: Record<string, string[]> = {
        submitted: ['pending', 'failed'],
        pending: ['posted', 'failed'],
        posted: ['reversed'],
        failed: [],
        reversed: [],
      };
      // Mostly the bank's next legal step (reversals included); sometimes a repeat or a move the state machine forbids.
      const choices =
        op.move < 0.75 && legal[before.status]!.length > 0
          ? legal[before.status]!
          : op.move < 0.9
            ? [before.status]
            : ['pending', 'posted', 'failed', 'reversed'];
      const status = choices[Math.floor(((op.move * 7919) % 1) * choices.length)]!;
      await this.injector.deliverQueued(
        index,
        (event) => this.bankConsumer(event),
        this.sqs({ transaction_id: group.id, status }, group.id),
      );
      return `${before.status}->${status}`;
    });
  }

  private async custodyEvent(index: number, op: Extract<Operation, { kind: 'custody_event' }>): Promise<string> {
    if (this.withdrawals.length === 0) return 'no withdrawal yet';
    const group = this.withdrawals[Math.floor(op.pick * this.withdrawals.length)]!;
    return this.inGroup(group, async () => {
      const body = op.confirm
        ? { withdrawal_request_id: group.id, status: 'CONFIRMED', transaction_hash: op.hash }
        : { withdrawal_request_id: group.id, status: 'FAILED' };
      await this.injector.deliverQueued(index, (event) => this.custodyConsumer(event), this.sqs(body, group.id));
      return op.confirm ? 'CONFIRMED' : 'FAILED';
    });
  }

  /** A quote's amounts against the model: price, quantity and what the client pays (`total_notional`). */
  private checkQuote(op: number, what: string, quote: any, model: QuoteModel, totalNotional?: Amount): void {
    this.checkAmounts(op, what, [
      fieldDiffers('price', model.price, quote?.price),
      fieldDiffers('quantity', model.quantity, quote?.quantity),
      fieldDiffers('total_notional', totalNotional ?? model.total, quote?.total_notional),
    ]);
  }

  private checkAmounts(op: number, what: string, problems: (string | undefined)[]): void {
    this.invariantCounts.amounts_modelled += 1;
    const found = problems.filter(Boolean);
    if (found.length > 0) this.violate('amounts match the model', op, `${what}: ${found.join('; ')}`);
  }

  /** What an accepted operation must have booked, checked against its movements after the drain. */
  private expect(
    op: number,
    what: string,
    reference: string,
    expected: { net: Net; prefix?: boolean; assets?: string[] },
  ): void {
    this.expectations.push({ op, what, reference, ...expected });
  }

  /**
   * Duplicate workers beside an operation (a task retried while its first run still works, two operators):
   * each may finish, or lose with a 503 (ServiceUnavailableError), or die in an injected crash; anything else
   * (a 500 of another kind, a TradeIdTakenError, a movement booked twice) is what a dropped condition gives.
   */
  private beside(op: number, what: string, work: () => Promise<PromiseSettledResult<unknown>[]>): void {
    this.duplicates.push(
      work().then(
        (results) => {
          for (const result of results) {
            this.invariantCounts.duplicate_workers += 1;
            if (result.status === 'fulfilled') continue;
            const error = result.reason as Error;
            // A recipient locked meanwhile stops a distribution's chunk with a 400 (documented; resumed later).
            const documented =
              error instanceof ServiceUnavailableError ||
              error instanceof SimulatedCrash ||
              (error instanceof ValidationError && /is not approved/.test(error.message + JSON.stringify(error)));
            if (!documented)
              this.violate(
                'a losing racer only answers 503',
                op,
                `${what}: ${error?.name}: ${error?.message ?? error}`,
              );
          }
        },
        (error) => this.violate('a losing racer only answers 503', op, `${what}: ${(error as Error).stack}`),
      ),
    );
  }

  /**
   * Captured signed bytes sent again (someone who saw them, or a client's retry). With the request's own
   * X-Request-Id: the first answer, byte for byte; with another or none: 409 "request already received", and
   * nothing done twice (the one-booking checks after the drain). Only bytes still inside the signature's
   * window: older ones are refused for their timestamp, which says nothing about the replay cache.
   */
  private async resend(index: number, op: Extract<Operation, { kind: 'resend' }>): Promise<string> {
    const nowSeconds = this.ctx.clock.nowSeconds();
    const recent = this.sent.filter((sent) => nowSeconds - sent.signed.timestamp < SIGNATURE_WINDOW_SECONDS - 15);
    if (recent.length === 0) return 'nothing recent';
    const earlier = recent[Math.floor(op.pick * recent.length)]!;
    const platform = this.platforms[earlier.platform]!;
    const requestId = op.requestId === 'same' ? earlier.requestId : op.requestId === 'other' ? op.otherId : undefined;
    let answer: Answer;
    for (let attempt = 1; ; attempt++) {
      answer = await platform.client.resend(earlier.signed, requestId, index, attempt);
      if (answer.status >= 500) this.checkFiveXx(index, 'POST', earlier.path, answer);
      if (!isTransient(answer)) break;
      if (attempt >= 30) throw new Error(`resend of op ${earlier.op}: still ${answer.status} ${answer.text}`);
      await sleep(50 * Math.min(attempt, 10));
    }
    this.invariantCounts.signed_resends += 1;
    if (op.requestId === 'same') {
      const first = this.answers.firstAnswer(earlier.requestId);
      if (!first || first.status !== answer.status || first.text !== answer.text)
        this.violate(
          'a resend with its own id gets the first answer',
          index,
          `request ${earlier.requestId} of op ${earlier.op} resent as signed: ${answer.status} ${answer.text.slice(0, 300)}, first ${first?.status} ${first?.text.slice(0, 300)}`,
        );
    } else if (answer.status !== 409 || !answer.text.includes('request already received'))
      this.violate(
        'a replayed signature is refused',
        index,
        `request ${earlier.requestId} of op ${earlier.op} resent as signed with ${op.requestId === 'other' ? 'another' : 'no'} X-Request-Id: ${answer.status} ${answer.text.slice(0, 300)}`,
      );
    return `${op.requestId} id ${answer.status}`;
  }

  /**
   * An accepted request's client id (client_transfer_id, client_trade_id) in a new request (fresh
   * X-Request-Id, freshly signed): 409 naming the client id, nothing booked (the one-booking-per-client-id
   * checks after the drain count the records).
   */
  private async reuseClientId(index: number, op: Extract<Operation, { kind: 'reuse_client_id' }>): Promise<string> {
    const withIds = this.sent.filter(
      (sent) =>
        (sent.path === '/transfers' && sent.text.includes('"client_transfer_id"')) ||
        (sent.path === '/trades' && sent.text.includes('"client_trade_id"')),
    );
    if (withIds.length === 0) return 'no client id yet';
    const earlier = withIds[Math.floor(op.pick * withIds.length)]!;
    const field = earlier.path === '/transfers' ? 'client_transfer_id' : 'client_trade_id';
    const locksBefore = new Map(this.lockCounts);
    const lockedBefore = new Set(this.lockedNow);
    const answer = await this.request(
      index,
      earlier.platform,
      'POST',
      earlier.path,
      undefined,
      op.requestId,
      earlier.text,
    );
    this.invariantCounts.client_ids_reused += 1;
    // 409 naming the client id; or 400 naming a party locked meanwhile (checked first; a trade report words it
    // "no participant ... this platform may report trades for"): never booked again.
    const duplicate = answer.status === 409 && answer.text.includes(`${field}: already used`);
    const named = [...answer.text.matchAll(/participant '?([A-Z0-9]{6})'?/g)].map((match) => match[1]!);
    const locked =
      answer.status === 400 &&
      named.some(
        (code) =>
          lockedBefore.has(code) ||
          this.lockedNow.has(code) ||
          (this.lockCounts.get(code) ?? 0) !== (locksBefore.get(code) ?? 0),
      );
    if (!duplicate && !locked)
      this.violate(
        'a client id books once',
        index,
        `${field} of op ${earlier.op} under request ${op.requestId}: ${answer.status} ${answer.text.slice(0, 300)}`,
      );
    return `${field} ${answer.status}`;
  }

  /**
   * Locks a customer while its money moves: a quote made for it before the lock, executed after, is refused
   * (400 naming it), as is a transfer out of its account; then it is approved again. Operations on the same
   * customer running meanwhile may be refused too, which is the point. Locks of one customer take turns.
   */
  private lock(index: number, op: Extract<Operation, { kind: 'lock' }>): Promise<string> {
    const platform = this.platforms[op.platform]!;
    const customer = platform.customers[op.customer]!;
    const admin = (status: string) =>
      this.untilDone(index, () =>
        runAdmin(
          [
            'participant',
            'status',
            '--platform',
            platform.code,
            '--participant',
            customer,
            '--status',
            status,
            '--reason',
            'simulation',
          ],
          { ctx: this.ctx },
        ),
      );
    const work = async (): Promise<string> => {
      const query = new URLSearchParams({
        underlying: 'BTC',
        quoted_currency: 'USD',
        side: 'buy',
        total: op.total,
        participant_code: customer,
      });
      const quote = await this.request(index, op.platform, 'GET', `/liquidity/rfq?${query}`, undefined);
      this.lockedNow.add(customer);
      this.lockCounts.set(customer, (this.lockCounts.get(customer) ?? 0) + 1);
      await admin('locked');
      try {
        // "is not approved (locked or disabled)" or "is locked, not approved", as the route words it.
        const refused = new RegExp(`participant ${customer} is (locked, )?not approved`);
        const quoted = quote.status === 200 ? this.json(quote).message : undefined;
        const executed = quoted
          ? await this.request(
              index,
              op.platform,
              'POST',
              '/liquidity/execute',
              { quote_id: quoted.quote_id },
              op.requestId,
            )
          : undefined;
        // On a loaded machine the lock can take longer than the quote lives: an execution answered after the
        // quote's expiry (by the service's clock) is refused as expired, checked before its participant. That
        // refusal moved nothing, but it proves nothing about the lock either, so it is counted apart.
        const expiredFirst =
          executed !== undefined &&
          executed.status === 400 &&
          executed.text.includes('quote has expired') &&
          this.ctx.clock.nowMs() >= Number(quoted.expire_ts);
        if (expiredFirst) this.invariantCounts.locked_quotes_expired += 1;
        const transfer = await this.request(
          index,
          op.platform,
          'POST',
          '/transfers',
          {
            from_participant_code: customer,
            from_account_label: 'general',
            to_participant_code: platform.participant,
            to_account_label: 'general',
            asset: 'USD',
            amount: '0.01',
          },
          op.transferId,
        );
        for (const [what, answer] of [
          ['execution of its quote', expiredFirst ? undefined : executed],
          ['transfer from it', transfer],
        ] as const) {
          if (!answer) continue;
          this.invariantCounts.locked_refusals += 1;
          if (answer.status !== 400 || !refused.test(answer.text))
            this.violate(
              "a locked participant's booking is refused",
              index,
              `${what} while ${customer} was locked: ${answer.status} ${answer.text.slice(0, 300)}`,
            );
        }
        return `locked: execute ${executed?.status ?? `quote ${quote.status}`}, transfer ${transfer.status}`;
      } finally {
        await admin('approved');
        this.lockedNow.delete(customer);
      }
    };
    const previous = this.lockChains.get(customer) ?? Promise.resolve();
    const result = previous.then(work, work);
    this.lockChains.set(
      customer,
      result.catch(() => undefined),
    );
    return result;
  }

  /** A platform's retry of an earlier request: the same id and bytes get the same answer; another body 422. */
  private async replay(index: number, op: Extract<Operation, { kind: 'replay' }>): Promise<string> {
    if (this.sent.length === 0) return 'nothing to replay';
    const earlier = this.sent[Math.floor(op.pick * this.sent.length)]!;
    if (!op.changed) {
      const answer = await this.request(
        index,
        earlier.platform,
        'POST',
        earlier.path,
        undefined,
        earlier.requestId,
        earlier.text,
      );
      this.invariantCounts.answers_replayed += 1;
      return `same body ${answer.status}`;
    }
    const changed = changeBody(earlier.text);
    const answer = await this.request(
      index,
      earlier.platform,
      'POST',
      earlier.path,
      undefined,
      earlier.requestId,
      changed,
      true,
    );
    if (answer.status !== 422)
      this.violate(
        'a changed body is refused',
        index,
        `request ${earlier.requestId} of op ${earlier.op} with another body answered ${answer.status} ${answer.text.slice(0, 200)}`,
      );
    return `changed body ${answer.status}`;
  }

  /** After the operations: trades settled or defaulted, deliveries done (faults off, as the issue says). */
  async drain(workflows: LocalWorkflows, webhooks: LocalWebhooks, clock: TestClock): Promise<void> {
    await Promise.all(this.duplicates);
    const deadline = Date.now() + DRAIN_DEADLINE_MS;
    let open = [...this.reportedTrades];
    while (open.length > 0 && Date.now() < deadline) {
      const still: string[] = [];
      for (const tradeId of open) {
        const trade = await getTrade(this.ctx, tradeId, { consistent: true });
        if (trade && trade.trade_state === 'terminated') continue;
        still.push(tradeId);
        // The sweep's redrive, at once: an execution that ran out of task retries under faults starts again.
        if (trade) await workflows.runner.ensure(settlementInputFor(this.ctx, trade));
      }
      open = still;
      if (open.length > 0) await sleep(1_000);
    }
    for (const tradeId of open)
      this.violate('every settlement terminal', undefined, `trade ${tradeId} still open after the drain`);
    await this.staleWrites();
    await this.resumeOpenDistributions();

    // Deliveries: wait for every event; after a while ask for the missing ones again (POST /events/{id}/redeliver).
    // The table is scanned for undelivered events only to start and to confirm: in between, the ones found
    // missing are watched in memory (a scan of a 10,000-operation run's table takes seconds and slows the
    // deliveries it waits for).
    let redelivered = false;
    let missing = await this.undelivered();
    let progress = { count: missing.length, atMs: Date.now() };
    for (;;) {
      missing = missing.filter((event) => !this.delivered.has(`${event.platform} ${event.id}`));
      if (missing.length === 0) {
        missing = await this.undelivered();
        if (missing.length === 0) break;
      }
      if (missing.length !== progress.count) progress = { count: missing.length, atMs: Date.now() };
      else if (Date.now() - progress.atMs > DRAIN_STALL_MS) {
        this.log(
          `  ${missing.length} events undelivered and none arriving for ${DRAIN_STALL_MS / 1000} s: the clock moves on ${STUCK_DELIVERY_MS / 1000} s for the sweep`,
        );
        clock.advance(STUCK_DELIVERY_MS);
        progress = { count: missing.length, atMs: Date.now() };
      }
      if (Date.now() > deadline) {
        for (const event of missing.slice(0, 50))
          this.violate(
            'every event delivered',
            undefined,
            `event ${event.id} (${event.type}) of ${event.platform} never delivered: ${await this.deliveryHistory(event)}`,
          );
        break;
      }
      if (!redelivered && Date.now() > deadline - DRAIN_DEADLINE_MS / 2) {
        redelivered = true;
        for (const event of missing) {
          const index = this.platforms.findIndex((p) => p.code === event.platform);
          await this.request(-2, index, 'POST', `/events/${event.id}/redeliver`, {}, randomUUID());
        }
      }
      await webhooks.sweep().catch(() => undefined);
      await sleep(1_000);
    }
  }

  /**
   * The slow worker's writes: each trade as read early on (open then), written now that it is terminated, as a
   * session's record (no status change: only the state read guards it) and as a default (a status change).
   * Both must be refused and leave the trade as it is; the trade-versus-ledger check then confirms nothing moved.
   */
  private async staleWrites(): Promise<void> {
    for (const [tradeId, { op, trade }] of this.staleTrades) {
      const at = this.ctx.clock.nowMs();
      const record = { parties: trade.parties.map((party) => ({ ...party, settlement_state: 'defaulted' as const })) };
      try {
        await transactWrite(this.ctx, tradeUpdateItems(this.ctx, trade, ['accepted', 'active'], record, at));
        this.violate(
          'a stale settlement write is refused',
          op,
          `trade ${tradeId}: a record from its ${trade.trade_state} state went through`,
        );
      } catch (error) {
        if (!(error instanceof TradeStateChangedError))
          this.violate('a stale settlement write is refused', op, `trade ${tradeId}: ${(error as Error).stack}`);
      }
      const moved = await updateTrade(
        this.ctx,
        trade,
        ['accepted', 'active'],
        { trade_state: 'terminated', settlement_state: 'defaulted', defaulted_timestamp: at },
        at,
      ).catch((error: Error) => error);
      if (moved !== false)
        this.violate(
          'a stale settlement write is refused',
          op,
          `trade ${tradeId}: a default from its ${trade.trade_state} state: ${moved instanceof Error ? moved.stack : 'written'}`,
        );
      else this.invariantCounts.stale_writes_refused += 2;
    }
  }

  /**
   * Distributions a locked recipient stopped part-way (a 400 to the client; every customer is approved again
   * by now): two operators resume each at once (`awards resume`), and once finished it must have paid what
   * the model says. A loser may only answer 503.
   */
  private async resumeOpenDistributions(): Promise<void> {
    for (const open of await listOpenDistributions(this.ctx)) {
      const asked = this.distributions.get(open.distribution_id);
      const op = asked?.op ?? -3;
      this.beside(op, 'two resumes of an open award distribution', async () => {
        const racers = await Promise.allSettled([
          resumeDistribution(this.ctx, open.platform_code, open.distribution_id),
          resumeDistribution(this.ctx, open.platform_code, open.distribution_id),
        ]);
        // Both racers may lose to the faults (a crash, a 503): an operator resumes again until it is finished,
        // so the amounts are checked on a finished distribution, not on one the faults left open.
        let lastRefusal: unknown;
        for (let again = 0; again <= RESUMES_AFTER_RACE; again++) {
          const stored = await getDistribution(this.ctx, open.platform_code, open.distribution_id);
          if (stored?.distribution.status === 'completed') return racers;
          if (again === RESUMES_AFTER_RACE) break;
          await resumeDistribution(this.ctx, open.platform_code, open.distribution_id).catch(async (error) => {
            lastRefusal = error;
            await sleep(1_000);
          });
        }
        // Told apart from a wrong amount: a distribution the drain could not finish pays nobody its remainder.
        this.violate(
          'operation completes',
          op,
          `award distribution ${open.distribution_id} still open after ${RESUMES_AFTER_RACE} resumes: ${
            lastRefusal instanceof Error ? (lastRefusal.stack ?? lastRefusal.message) : String(lastRefusal)
          }`,
        );
        return racers;
      });
      if (asked)
        this.expect(
          op,
          `award distribution ${open.distribution_id} (resumed)`,
          `award_distribution:${open.platform_code}:${open.distribution_id}`,
          { net: asked.net, prefix: true },
        );
    }
    await Promise.all(this.duplicates);
  }

  /** What the table and the receiver know of an undelivered event: its dispatch, deliveries and attempts. */
  private async deliveryHistory(event: { id: string; platform: string }): Promise<string> {
    const db = cleanClient(this.ctx.config.DYNAMODB_ENDPOINT!);
    try {
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: this.ctx.tables.main,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': eventEntity.partitionKey({ event_id: event.id }) },
          ConsistentRead: true,
        }),
      );
      const parts = Items.map((item) => {
        if (item.sk === 'EVENT') return `event dispatched=${item.dispatched === true} due=${item.gsi3sk ?? 'none'}`;
        if (String(item.sk).startsWith('DELIVERY#'))
          return `delivery ${item.endpoint_id} state=${item.state} attempts=${item.attempts} next=${item.next_attempt_at} due=${item.gsi3sk ?? 'none'} lease=${item.lease_until ?? 'none'} reason=${item.failure_reason ?? ''}`;
        if (String(item.sk).startsWith('ATTEMPT#'))
          return `attempt ${item.sk} status=${item.status_code ?? item.error ?? '?'}`;
        return String(item.sk);
      });
      const receives = this.receives.get(`${event.platform} ${event.id}`) ?? 0;
      return `${parts.join('; ')}; receiver saw it ${receives} times`;
    } finally {
      db.destroy();
    }
  }

  private async undelivered(): Promise<{ id: string; type: string; platform: string }[]> {
    const db = cleanClient(this.ctx.config.DYNAMODB_ENDPOINT!);
    const missing: { id: string; type: string; platform: string }[] = [];
    for await (const item of scanTable(db, this.ctx.tables.main)) {
      if (item.type !== 'event' || item.sk !== 'EVENT') continue;
      const envelope = JSON.parse(item.body as string);
      const platform = this.platforms.find((p) => p.code === envelope.platform_code);
      if (!platform || envelope.type === 'webhook.test' || envelope.created_at < platform.endpointCreatedAtMs) continue;
      if (!this.delivered.has(`${envelope.platform_code} ${envelope.id}`))
        missing.push({ id: envelope.id, type: envelope.type, platform: envelope.platform_code });
    }
    db.destroy();
    return missing;
  }

  /** The checks over the whole table once everything drained. */
  async check(endpoint: string, table: string): Promise<void> {
    const report = await runLedgerCheck(this.ctx, { scope: {}, totalSegments: 4 });
    this.ledgerReport = {
      items_scanned: report.summary.items_scanned,
      accounts_checked: report.summary.accounts_checked,
      movements_checked: report.summary.movements_checked,
      balance_events: report.summary.balance_events,
    };
    if (!report.complete || !report.clean || report.unsettled.length > 0) {
      for (const discrepancy of report.discrepancies.slice(0, 20))
        this.violate('ledger check', undefined, JSON.stringify(discrepancy));
      for (const unsettled of report.unsettled.slice(0, 20))
        this.violate('ledger check', undefined, `unsettled: ${JSON.stringify(unsettled)}`);
      if (report.discrepancies.length === 0 && report.unsettled.length === 0)
        this.violate('ledger check', undefined, `incomplete: ${JSON.stringify(report.summary)}`);
    }

    const db = cleanClient(endpoint);
    const transferIds = new Map<string, number>();
    const tradeIds = new Map<string, number>();
    const movementsByReference = new Map<string, StoredLeg[][]>();
    const movementsById = new Map<string, StoredLeg[]>();
    const trades = new Map<string, Record<string, any>>();
    let transfers = 0;
    for await (const item of scanTable(db, table)) {
      if (item.type === 'movement' && item.sk === 'MOVEMENT') {
        const legs = item.legs as StoredLeg[];
        movementsById.set(item.movement_id, legs);
        movementsByReference.set(item.reference, [...(movementsByReference.get(item.reference) ?? []), legs]);
      }
      if (item.sk === 'TRADE') trades.set(String(item.pk).slice('TRADE#'.length), item);
      if (item.sk === 'TRANSFER') {
        transfers += 1;
        if (item.client_transfer_id)
          transferIds.set(item.client_transfer_id, (transferIds.get(item.client_transfer_id) ?? 0) + 1);
      } else if (item.sk === 'TRADE') {
        if (String(item.client_trade_id ?? '').startsWith('ct-'))
          tradeIds.set(item.client_trade_id, (tradeIds.get(item.client_trade_id) ?? 0) + 1);
        this.invariantCounts.settlements_terminal += 1;
        if (item.trade_state !== 'terminated')
          this.violate(
            'every settlement terminal',
            undefined,
            `trade ${item.pk} is ${item.trade_state}/${item.settlement_state}`,
          );
      } else if (item.sk === 'EVENT' && item.type === 'event') {
        const envelope = JSON.parse(item.body as string);
        if (envelope.type !== 'account_balance.changed') continue;
        this.invariantCounts.balance_changes += 1;
        const problem = negativeBalance(envelope.data as BalanceChange);
        if (problem) this.violate('no guarded balance below zero', undefined, `event ${envelope.id}: ${problem}`);
      }
    }
    db.destroy();
    if (transfers !== this.transferRequests.size)
      this.violate(
        'one booking per idempotency key',
        undefined,
        `${transfers} transfers stored for ${this.transferRequests.size} requests answered 201`,
      );
    for (const id of this.clientTransferIds) {
      this.invariantCounts.one_booking_per_id += 1;
      if (transferIds.get(id) !== 1)
        this.violate(
          'one booking per client id',
          undefined,
          `client_transfer_id ${id}: ${transferIds.get(id) ?? 0} transfers`,
        );
    }
    for (const [id, count] of transferIds)
      if (count > 1 || !this.clientTransferIds.has(id))
        this.violate(
          'one booking per client id',
          undefined,
          `client_transfer_id ${id}: ${count} transfers, answered ${this.clientTransferIds.has(id) ? '201' : 'no 201'}`,
        );
    for (const id of this.clientTradeIds) {
      this.invariantCounts.one_booking_per_id += 1;
      if (tradeIds.get(id) !== 1)
        this.violate('one booking per client id', undefined, `client_trade_id ${id}: ${tradeIds.get(id) ?? 0} trades`);
    }
    for (const [id, count] of tradeIds)
      if (count > 1 || !this.clientTradeIds.has(id))
        this.violate('one booking per client id', undefined, `client_trade_id ${id}: ${count} trades`);
    this.invariantCounts.events_delivered = this.delivered.size;
    this.invariantCounts.answers_replayed = this.answers.checked;
    this.checkBookedAmounts(movementsByReference);
    this.checkTradesAgainstLedger(trades, movementsById, movementsByReference);
    await this.checkPaymentsAgainstLedger(movementsByReference);
  }

  /** Each accepted operation's movements against the reference model (model.ts). */
  private checkBookedAmounts(movementsByReference: Map<string, StoredLeg[][]>): void {
    for (const expectation of this.expectations) {
      const movements = expectation.prefix
        ? [...movementsByReference]
            .filter(([reference]) => reference.startsWith(expectation.reference))
            .flatMap(([, m]) => m)
        : (movementsByReference.get(expectation.reference) ?? []);
      this.invariantCounts.movements_modelled += 1;
      if (movements.length === 0) {
        this.violate(
          'amounts match the model',
          expectation.op,
          `${expectation.what}: no movement ${expectation.reference}`,
        );
        continue;
      }
      let booked = netOfLegs(movements.flat());
      let expected = expectation.net;
      if (expectation.assets) {
        booked = booked.only(expectation.assets);
        expected = expected.only(expectation.assets);
      }
      const difference = booked.differenceFrom(expected);
      if (difference) this.violate('amounts match the model', expectation.op, `${expectation.what}: ${difference}`);
    }
  }

  /**
   * Every trade's state against the ledger. A reported trade is settled if and only if its settlement
   * movement exists, and that movement moves exactly the trade's amounts (buyer and seller each give what the
   * other gets); a defaulted one moved nothing. An executed one (quote, reward, award funding) is settled
   * with its movement.
   */
  private checkTradesAgainstLedger(
    trades: Map<string, Record<string, any>>,
    movementsById: Map<string, StoredLeg[]>,
    movementsByReference: Map<string, StoredLeg[][]>,
  ): void {
    for (const [tradeId, terms] of this.tradeTerms) {
      this.invariantCounts.trades_matched_to_ledger += 1;
      const item = trades.get(tradeId);
      const legs = movementsById.get(`settlement-${tradeId}`);
      const state = `${item?.trade_state}/${item?.settlement_state}`;
      if (!item) {
        this.violate('trade state matches the ledger', terms.op, `trade ${tradeId} reported, not stored`);
        continue;
      }
      if ((item.settlement_state === 'settled') !== (legs !== undefined)) {
        this.violate(
          'trade state matches the ledger',
          terms.op,
          `trade ${tradeId} is ${state} ${legs ? 'with' : 'without'} its settlement movement`,
        );
        continue;
      }
      if (!legs) continue;
      const notional = tradeNotional(terms.price, terms.quantity, 'USD');
      const expected = new Net()
        .add(holding(terms.buyer, 'general', 'BTC'), terms.quantity)
        .add(holding(terms.buyer, 'general', 'USD'), notional.negated())
        .add(holding(terms.seller, 'general', 'BTC'), `-${terms.quantity}`)
        .add(holding(terms.seller, 'general', 'USD'), notional);
      const difference = netOfLegs(legs).differenceFrom(expected);
      if (difference)
        this.violate(
          'trade state matches the ledger',
          terms.op,
          `trade ${tradeId} (${state}): settlement ${difference}`,
        );
    }
    for (const expectation of this.expectations) {
      const tradeId = expectation.reference.startsWith('trade:')
        ? expectation.reference.slice('trade:'.length)
        : undefined;
      if (!tradeId) continue;
      this.invariantCounts.trades_matched_to_ledger += 1;
      const item = trades.get(tradeId);
      const booked = (movementsByReference.get(expectation.reference) ?? []).length;
      if (item?.trade_state !== 'terminated' || item.settlement_state !== 'settled' || booked !== 1)
        this.violate(
          'trade state matches the ledger',
          expectation.op,
          `${expectation.what}: trade ${item?.trade_state}/${item?.settlement_state} with ${booked} movements`,
        );
    }
  }

  /**
   * Each payment's bank events against the ledger: a posted payment has booked one movement, a reversed one
   * two (the posting and its reversal), any other none, however many times (and however concurrently) its
   * events were delivered.
   */
  private async checkPaymentsAgainstLedger(movementsByReference: Map<string, StoredLeg[][]>): Promise<void> {
    for (const { id } of this.payments) {
      const payment = await getPayment(this.ctx, id);
      if (!payment) continue;
      this.invariantCounts.payments_matched_to_ledger += 1;
      const expected = payment.status === 'posted' ? 1 : payment.status === 'reversed' ? 2 : 0;
      const booked = (movementsByReference.get(`payment:${id}`) ?? []).length;
      if (booked !== expected)
        this.violate(
          'payment state matches the ledger',
          undefined,
          `payment ${id} is ${payment.status} with ${booked} movements (expected ${expected})`,
        );
    }
  }

  summary(ops: number, elapsedMs: number): SimulationSummary {
    const operations: Record<string, Record<string, number>> = {};
    for (const [kind, results] of [...this.outcomes].sort()) operations[kind] = Object.fromEntries([...results].sort());
    return {
      seed: this.seed,
      ops,
      elapsed_ms: elapsedMs,
      operations,
      faults: this.injector.countsByKind(),
      invariants: {
        ...this.invariantCounts,
        ledger_discrepancies: this.violations.filter((v) => v.invariant === 'ledger check').length,
      },
      ledger_check: this.ledgerReport,
    };
  }
}

/** The same request with another amount (or quote): what a client that reused an id by mistake sends. */
function changeBody(text: string): string {
  const body = JSON.parse(text) as Record<string, unknown>;
  for (const field of ['amount', 'total', 'quantity', 'trade_quantity'] as const) {
    if (typeof body[field] === 'string') {
      const value = body[field] as string;
      body[field] = value.endsWith('1') ? `${value.slice(0, -1)}2` : `${value.slice(0, -1)}1`;
      return JSON.stringify(body);
    }
  }
  if (typeof body.quote_id === 'string') return JSON.stringify({ ...body, quote_id: randomUUID() });
  return JSON.stringify({ ...body, description: 'changed' });
}

export type { OperationKind };
