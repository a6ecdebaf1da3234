import type { Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { TableDefinition } from '../lib/store/table/tables.js';
import type { Route } from './routes.js';
import type { ServiceEnvironment, ServiceFunction } from './service-function.js';

/**
 * What each part of the stack (the API, the event consumers, the settlement workflow, the webhooks) builds on.
 *
 * The parts add their resources to the stack itself rather than to constructs of their own: a resource's
 * logical id is its construct path, so nesting them would give every API method, queue and the state machine
 * a new id, and CloudFormation would replace them on the next deploy (a new API URL, queued messages and
 * running executions lost). `test/infra/stack.test.ts` pins the ids of the stateful resources.
 */
export interface StackBase {
  stack: Stack;
  mainTable: Table;
  ttlTable: Table;
  secretsKey: Key;
  /** The environment every function starts from. */
  environment: ServiceEnvironment;
  /** A ServiceFunction that the alarms and the dashboard watch. */
  addFunction(id: string, purpose: string, props: ConstructorParameters<typeof ServiceFunction>[2]): ServiceFunction;
  /** One function per row of the route table, keyed by the row (the API adds them; other parts extend them). */
  routeFunctions: Map<Route, ServiceFunction>;
}

/**
 * Reserved concurrency: what these functions keep for themselves, so API traffic using the
 * account's Lambda concurrency cannot throttle them, and their ceiling. 117 in all; Lambda keeps at least 100
 * unreserved, so the account needs a concurrency quota of 217 or more (the default is 1,000; README, "Deploying").
 */
export const RESERVED_CONCURRENCY = {
  /**
   * Per settlement task. A task is a few DynamoDB calls (about 100 ms): 10 at once run about 100 tasks a second
   * of each kind, while settling 500 trades in a minute (the bench's goal) needs about 25 a second of all
   * four. A throttled task is retried by the state machine (Lambda.TooManyRequestsException).
   */
  settlementTask: 10,
  /** The open-trade sweep runs every 5 minutes for up to 5: two may overlap. */
  settlementSweep: 2,
  /**
   * Bank and custody events: FIFO queues whose batches of 10 take about a second; 5 at once apply about 50
   * events a second per queue, more than a bank's payment file or a custodian's outcomes arrive at.
   */
  eventConsumer: 5,
  /**
   * The stream dispatcher runs up to 4 batches per stream shard at once (`DISPATCH_STREAM_SOURCE`); 10 covers two
   * busy shards, and a throttled batch waits and is retried by the mapping, not lost.
   */
  webhookDispatcher: 10,
  /** The delivery queue's event source runs up to 50 at once (maxConcurrency); reserving less would throttle it. */
  webhookDelivery: 50,
  /** The webhook sweep runs every minute for up to 5: five may overlap. */
  webhookSweep: 5,
} as const;

export type TableAccess = 'read' | 'write' | 'delete';

const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
// ConditionCheckItem: the guards inside TransactWriteItems (each of a transaction's actions is authorised on its own).
const WRITE_ACTIONS = [...READ_ACTIONS, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'];

const TABLE_ACTIONS: Record<TableAccess, readonly string[]> = {
  read: READ_ACTIONS,
  write: WRITE_ACTIONS,
  delete: [...WRITE_ACTIONS, 'dynamodb:DeleteItem'],
};

/**
 * Grants the item actions one access level needs on a table and its named indexes, and nothing else: no Scan,
 * no DeleteItem below `delete`, no table management, and no `index/*` (CDK's grantReadData grants all three
 * kinds of wildcard). Nothing on a request path scans; a full scan is an ops CLI task under ops credentials.
 */
export function grantTable(grantee: IGrantable, table: Table, definition: TableDefinition, access: TableAccess): void {
  Grant.addToPrincipal({
    grantee,
    actions: [...TABLE_ACTIONS[access]],
    resourceArns: [table.tableArn, ...definition.globalIndexes.map((index) => `${table.tableArn}/index/${index.name}`)],
  });
}

/**
 * The partition keys of a hot account's booking queue (`bookingLeaseEntity`, `queuedBookingEntity` in
 * lib/store/entities/booking-queue.ts): its committer's lease and its queued entries. `test/infra/iam-grants.test.ts` builds
 * keys with those entities and asks the policy evaluator, so the pattern cannot drift from them.
 */
export const BOOKING_QUEUE_KEYS = 'BOOKINGS#*';

/** The partition keys of the rate-limit windows in the TTL table (`rateWindowEntity` in lib/store/entities/window.ts). */
export const RATE_WINDOW_KEYS = 'RATE#*';

/**
 * A function that books through the group-commit engine (lib/ledger/engine.ts; its hot-account path,
 * lib/ledger/hot-account.ts) deletes main-table items in two places: a commit round removes its queue entries
 * inside its TransactWriteItems (IAM authorizes each item of a transaction as its own action) and the committer
 * releases its lease (in its tenure's last round's transaction, or alone). DeleteItem on those
 * keys only: `dynamodb:LeadingKeys` holds every partition key a request names, and a DeleteItem names one.
 */
export function grantBookingQueue(grantee: IGrantable, table: Table): void {
  Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:DeleteItem'],
    resourceArns: [table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [BOOKING_QUEUE_KEYS] } },
  });
}

/**
 * With RATE_LIMIT_COUNTER=table the signature check counts each request with one UpdateItem of its key's
 * window in the TTL table: every signed route needs it, a GET included (which otherwise never writes there).
 */
export function grantRateLimitCounter(grantee: IGrantable, table: Table): void {
  Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:UpdateItem'],
    resourceArns: [table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [RATE_WINDOW_KEYS] } },
  });
}
