import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { AppContext } from '../../../lib/context.js';
import { MAIN_TABLE, TTL_TABLE, type TableDefinition } from '../../../lib/store/table/tables.js';
import { type DeployedRoles, LOCAL_ACCOUNT, LOCAL_NAMES, type PolicyStatementJson } from './roles.js';
import { type AwsRequest, dynamoRequests } from './dynamodb-requests.js';

/**
 * Run as deployed: every AWS call a function makes locally is authorized against that function's own role
 * (`deployed-roles.ts`) before it is sent, by AWS's evaluation logic as `@cloud-copilot/iam-simulate`
 * implements it. The local runtime names the running function (`runAs`) wherever it invokes a handler, as
 * Lambda gives each invocation its role's credentials; a call made outside any function (the ops CLI, a
 * test seeding data, the local stand-ins of Step Functions and SQS doing their own bookkeeping) runs under
 * ops credentials and is not checked. docs/run-as-deployed.md.
 */

interface RunningFunction {
  /** The handler module, which names the function's role in `DeployedRoles`. */
  handler: string;
}

const running = new AsyncLocalStorage<RunningFunction | undefined>();

/** Runs `run` as the function whose handler module is `handler`: its AWS calls are authorized against its role. */
export function runAs<T>(handler: string, run: () => T): T {
  return running.run({ handler }, run);
}

/** `fn` made to run as the function of `handler` whenever it is called (a bound handler the runtime invokes). */
export function asFunction<A extends unknown[], R>(handler: string, fn: (...args: A) => R): (...args: A) => R {
  return (...args) => runAs(handler, () => fn(...args));
}

/**
 * Runs `run` outside any function: what an AWS service does on its own behalf once a function's call to it
 * has been authorized (the local Step Functions recording its history and invoking tasks, the local queue
 * invoking its consumer).
 */
export function asService<T>(run: () => T): T {
  return running.run(undefined, run);
}

/** The function running here, if any. */
export function runningFunction(): string | undefined {
  return running.getStore()?.handler;
}

/** The decision on one request, kept for the process's life (evaluating costs milliseconds, a lookup nothing). */
type Decision = { allowed: true } | { allowed: false; explicit: boolean };

/** Decisions kept at most; past that the memo starts over (distinct leading keys of deletes could grow it). */
const MEMO_LIMIT = 50_000;

interface Role {
  id: string;
  /** The role's ARN, the principal the evaluator is asked about. */
  roleArn: string;
  /** The role's session as AWS names the caller in a refusal. */
  principal: string;
  policy: { Version: string; Statement: PolicyStatementJson[] };
  /** Actions of statements conditioned on `dynamodb:LeadingKeys`: only their decisions depend on the keys. */
  keyedActions: RegExp[];
}

/** The names a local run gives what the stack names: its region and its two tables. */
export interface LocalNames {
  region: string;
  tables: { main: string; ttl: string };
}

/** The deployed roles of one local run, and the decisions made on them. */
export class LocalIam {
  private readonly roles = new Map<string, Role>();
  private readonly decisions = new Map<string, Promise<Decision>>();
  /** The local stand-ins' ARNs (the state machine, the webhook delivery queue). */
  readonly resources: DeployedRoles['resources'];
  readonly names: LocalNames;

  constructor(
    roles: DeployedRoles,
    names: LocalNames,
    private readonly logger: Pick<Logger, 'error'>,
  ) {
    this.names = names;
    const local = JSON.parse(
      JSON.stringify(roles)
        .replaceAll(LOCAL_NAMES.region, names.region)
        .replaceAll(LOCAL_NAMES.mainTable, names.tables.main)
        .replaceAll(LOCAL_NAMES.ttlTable, names.tables.ttl),
    ) as DeployedRoles;
    this.resources = local.resources;
    for (const [handler, role] of Object.entries(local.functions)) {
      this.roles.set(handler, {
        id: role.id,
        roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/${role.id}Role`,
        principal: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${role.id}Role/${role.id}`,
        policy: { Version: '2012-10-17', Statement: role.statements },
        keyedActions: role.statements
          .filter((statement) => JSON.stringify(statement.Condition ?? {}).includes('dynamodb:LeadingKeys'))
          .flatMap((statement) => [statement.Action].flat().map(actionPattern)),
      });
    }
  }

  /** The table ARN of a local table. */
  tableArn(table: string): string {
    return `arn:aws:dynamodb:${this.names.region}:${LOCAL_ACCOUNT}:table/${table}`;
  }

  tableDefinition(table: string): TableDefinition | undefined {
    if (table === this.names.tables.main) return MAIN_TABLE;
    if (table === this.names.tables.ttl) return TTL_TABLE;
    return undefined;
  }

  /** Whether the function of `handler` may make `request` (memoized). */
  decide(handler: string, request: AwsRequest): Promise<Decision> {
    const role = this.roleOf(handler);
    const keyed = role.keyedActions.some((pattern) => pattern.test(request.action));
    const memo = `${handler}\n${request.action}\n${request.resource}\n${keyed ? (request.leadingKeys ?? []).join('\n') : ''}`;
    let decision = this.decisions.get(memo);
    if (!decision) {
      if (this.decisions.size >= MEMO_LIMIT) this.decisions.clear();
      decision = evaluate(role, request);
      this.decisions.set(memo, decision);
      decision.catch(() => this.decisions.delete(memo));
    }
    return decision;
  }

  /**
   * Authorizes every request of one call for the function of `handler`; the first refused fails the call as
   * AWS fails it (AccessDeniedException, HTTP 400, a client fault) and is logged with function, action and
   * resource. Nothing is sent when one is refused, as a transaction with one refused item is refused whole.
   */
  async authorize(handler: string, requests: readonly AwsRequest[]): Promise<void> {
    const decisions = await Promise.all(requests.map((request) => this.decide(handler, request)));
    const refused = decisions.findIndex((decision) => !decision.allowed);
    if (refused < 0) return;
    const request = requests[refused]!;
    const role = this.roleOf(handler);
    const decision = decisions[refused] as Extract<Decision, { allowed: false }>;
    const because = decision.explicit
      ? 'with an explicit deny in an identity-based policy'
      : `because no identity-based policy allows the ${request.action} action`;
    const message = `User: ${role.principal} is not authorized to perform: ${request.action} on resource: ${request.resource} ${because}`;
    this.logger.error('access denied: the function is not allowed this call by its deployed role', {
      function: role.id,
      handler,
      action: request.action,
      resource: request.resource,
      ...(request.leadingKeys && { leadingKeys: request.leadingKeys }),
    });
    throw accessDenied(message);
  }

  private roleOf(handler: string): Role {
    const role = this.roles.get(handler);
    // The local runtime names a handler no function of the stack runs: the two lists drifted apart.
    if (!role) throw new Error(`local IAM: no function of the stack runs ${handler}`);
    return role;
  }
}

/** An IAM action pattern (`dynamodb:*Item`) as a regular expression, case-insensitive as IAM matches actions. */
function actionPattern(action: string): RegExp {
  const escaped = action
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 'i');
}

async function evaluate(role: Role, request: AwsRequest): Promise<Decision> {
  const result = await runSimulation(
    {
      request: {
        principal: role.roleArn,
        action: request.action,
        resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
        contextVariables: request.leadingKeys ? { 'dynamodb:LeadingKeys': request.leadingKeys } : {},
      },
      identityPolicies: [{ name: `${role.id}RoleDefaultPolicy`, policy: role.policy }],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  // A request the evaluator cannot read (an unknown action, a malformed ARN) is a bug here, not a refusal.
  if (result.resultType === 'error')
    throw new Error(
      `local IAM: cannot evaluate ${request.action} on ${request.resource}: ${JSON.stringify(result.errors)}`,
    );
  if (result.overallResult === 'Allowed') return { allowed: true };
  return { allowed: false, explicit: result.overallResult === 'ExplicitlyDenied' };
}

/**
 * The error AWS answers a refused call with, as the SDK gives it to the caller: named AccessDeniedException,
 * a client fault with HTTP status 400, which the store's retry policy does not retry. A DynamoDB service
 * exception for every service: the local Step Functions and SQS stand-ins have no SDK client of their own.
 */
export function accessDenied(message: string): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 },
    message,
  });
}

/** The LocalIam of each client enforcement is on (a client may serve several contexts of one run). */
const enforced = new WeakMap<object, LocalIam>();

/**
 * Puts `ctx` under its run's deployed roles: every call of its DynamoDB client made inside a function is
 * authorized first, and the local stand-ins reached through `authorizeLocal` check theirs. Returns `ctx`.
 */
export function enforce<C extends Pick<AppContext, 'db' | 'tables' | 'config' | 'logger'>>(
  ctx: C,
  roles: DeployedRoles,
): C {
  const existing = enforced.get(ctx.db);
  if (existing) {
    const { main, ttl } = existing.names.tables;
    if (main !== ctx.tables.main || ttl !== ctx.tables.ttl)
      throw new Error(`local IAM: one DynamoDB client serves tables ${main} and ${ctx.tables.main}`);
    return ctx;
  }
  // A stand-in without a middleware stack (a test's wrapper that forwards to an enforced client) is
  // authorized where it forwards to.
  if (!(ctx.db as Partial<DynamoDBDocumentClient>).middlewareStack) return ctx;
  const iam = new LocalIam(roles, { region: ctx.config.AWS_REGION, tables: ctx.tables }, ctx.logger);
  enforced.set(ctx.db, iam);
  addAuthorizer(ctx.db, iam);
  return ctx;
}

/**
 * Authorizes requests to a local stand-in of an AWS service (Step Functions, SQS) for the running function,
 * before the stand-in acts; nothing when no function runs or `ctx` is not enforced.
 */
export async function authorizeLocal(
  ctx: Pick<AppContext, 'db'>,
  requests: (iam: LocalIam) => AwsRequest[],
): Promise<void> {
  const handler = runningFunction();
  const iam = enforced.get(ctx.db);
  if (handler === undefined || !iam) return;
  await iam.authorize(handler, requests(iam));
}

/**
 * One middleware on the client, at its first step: outside the SDK's retries, so a refused call is refused
 * once (AWS refuses it the same way every time) and never reaches DynamoDB Local.
 */
function addAuthorizer(client: DynamoDBDocumentClient, iam: LocalIam): void {
  const tables = {
    arnOf: (table: string) => iam.tableArn(table),
    definitionOf: (table: string) => iam.tableDefinition(table),
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const handler = runningFunction();
      if (handler !== undefined) await iam.authorize(handler, dynamoRequests(context.commandName!, args.input, tables));
      return next(args);
    },
    { step: 'initialize', name: 'localIamAuthorizer', priority: 'high' },
  );
}
