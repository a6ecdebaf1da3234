import { describe, expect, inject, it } from 'vitest';
import { BOOKING_ROUTES } from '../../infra/api.js';
import { EVENT_HANDLERS } from '../../infra/event-consumers.js';
import { type AwsRequest, dynamoRequests } from '../../infra/local/iam/dynamodb-requests.js';
import { LocalIam } from '../../infra/local/iam/enforcement.js';
import { LOCAL_WEBHOOK_HANDLERS } from '../../infra/local/webhook-runtime.js';
import { LOCAL_SWEEP_HANDLER, LOCAL_TASK_HANDLERS } from '../../infra/local/workflow-runner.js';
import { SETTLEMENT_SWEEP_HANDLER, SETTLEMENT_TASK_HANDLERS } from '../../infra/settlement.js';
import { WEBHOOK_HANDLERS } from '../../infra/webhooks.js';
import { routes } from '../../lib/routes.js';
import { bookingLeaseEntity, queuedBookingEntity } from '../../lib/store/entities/booking-queue.js';
import { transferEntity } from '../../lib/store/entities/transfer.js';
import { rateWindowEntity } from '../../lib/store/entities/window.js';
import { auditEntity } from '../../lib/store/entities/audit.js';
import { retryReason } from '../../lib/store/table/retry.js';

/**
 * The deployed roles (read from the stack's constructs once per run, test/support/global-setup.ts) asked
 * through the same evaluator the local runtime authorizes every call with: what each function's code calls
 * is allowed, and no more than that where the grant is narrowed by keys.
 */
const roles = inject('deployedRoles');
const tables = { main: 'svc-main', ttl: 'svc-windows' };
const iam = new LocalIam(roles, { region: 'us-east-1', tables }, { error: () => undefined });
const mainArn = iam.tableArn(tables.main);
const ttlArn = iam.tableArn(tables.ttl);

const allowed = async (handler: string, request: AwsRequest) => (await iam.decide(handler, request)).allowed;
const deleteOn = (resource: string, pk: string): AwsRequest => ({
  action: 'dynamodb:DeleteItem',
  resource,
  leadingKeys: [pk],
});

/** Every function that books through the group-commit engine (issue: group commit could not commit on AWS). */
const BOOKING_FUNCTIONS = [
  ...BOOKING_ROUTES.map((r) => routes.find((route) => route.method === r.method && route.path === r.path)!.handler),
  EVENT_HANDLERS.BankEvents,
  EVENT_HANDLERS.CustodyEvents,
  SETTLEMENT_TASK_HANDLERS.attempt,
];

describe('deployed roles, as the evaluator reads them', () => {
  it('give every signed route the TTL table UpdateItem that counts its rate limit (RATE_LIMIT_COUNTER=table)', async () => {
    const signed = routes.filter((route) => route.area !== null);
    expect(signed.filter((route) => route.method === 'GET').length).toBeGreaterThan(20);
    const rateWindow = rateWindowEntity.partitionKey({ api_key: 'AK123', window_start: 1_700_000_000 });
    for (const route of signed) {
      const update = { action: 'dynamodb:UpdateItem', resource: ttlArn, leadingKeys: [rateWindow] };
      expect(await allowed(route.handler, update), `${route.method} ${route.path}`).toBe(true);
    }
  });

  it('keep a GET to the rate windows of the TTL table: no other key, and no delete there', async () => {
    const getAssets = routes.find((route) => route.method === 'GET' && route.path === '/assets')!.handler;
    const other = { action: 'dynamodb:UpdateItem', resource: ttlArn, leadingKeys: ['IDEMPOTENCY#x'] };
    expect(await allowed(getAssets, other)).toBe(false);
    expect(
      await allowed(getAssets, deleteOn(ttlArn, rateWindowEntity.partitionKey({ api_key: 'AK123', window_start: 1 }))),
    ).toBe(false);
  });

  it('let every booking function delete its booking queue entries and lease, and nothing else of the main table', async () => {
    for (const handler of BOOKING_FUNCTIONS) {
      expect(
        await allowed(handler, deleteOn(mainArn, bookingLeaseEntity.partitionKey({ account_key: 'ACCOUNT#A' }))),
      ).toBe(true);
      expect(
        await allowed(
          handler,
          deleteOn(mainArn, queuedBookingEntity.partitionKey({ account_key: 'ACCOUNT#A', shard: 3 })),
        ),
      ).toBe(true);
      expect(await allowed(handler, deleteOn(mainArn, transferEntity.partitionKey({ id: 42 }))), handler).toBe(false);
      expect(await allowed(handler, deleteOn(mainArn, auditEntity.partitionKey({ audit_id: 'x' }))), handler).toBe(
        false,
      );
    }
  });

  it('give no other function a delete on the booking queue (POST /trades, a GET, the settlement sweep)', async () => {
    const trades = routes.find((route) => route.method === 'POST' && route.path === '/trades')!.handler;
    const transfers = routes.find((route) => route.method === 'GET' && route.path === '/transfers')!.handler;
    for (const handler of [trades, transfers, SETTLEMENT_SWEEP_HANDLER])
      expect(
        await allowed(handler, deleteOn(mainArn, bookingLeaseEntity.partitionKey({ account_key: 'ACCOUNT#A' }))),
        handler,
      ).toBe(false);
  });

  it('authorize each item of a transaction as its own action: one refused item refuses the call', async () => {
    const requests = dynamoRequests(
      'TransactWriteItemsCommand',
      {
        TransactItems: [
          { Put: { TableName: tables.main, Item: { pk: 'MOVEMENT#1', sk: 'MOVEMENT' } } },
          { Delete: { TableName: tables.main, Key: { pk: 'BOOKINGS#ACCOUNT#A#Q1', sk: 'Q#b1' } } },
          { ConditionCheck: { TableName: tables.ttl, Key: { pk: 'CLIENT#x' } } },
        ],
      },
      { arnOf: (table) => iam.tableArn(table), definitionOf: (table) => iam.tableDefinition(table) },
    );
    expect(requests).toEqual([
      { action: 'dynamodb:PutItem', resource: mainArn, leadingKeys: ['MOVEMENT#1'] },
      { action: 'dynamodb:DeleteItem', resource: mainArn, leadingKeys: ['BOOKINGS#ACCOUNT#A#Q1'] },
      { action: 'dynamodb:ConditionCheckItem', resource: ttlArn, leadingKeys: ['CLIENT#x'] },
    ]);
    const postTransfers = BOOKING_FUNCTIONS[0]!;
    await expect(iam.authorize(postTransfers, requests)).resolves.toBeUndefined();
    const getTransfers = routes.find((route) => route.method === 'GET' && route.path === '/transfers')!.handler;
    await expect(iam.authorize(getTransfers, requests)).rejects.toThrow(/dynamodb:PutItem/);
  });

  it('refuse as AWS refuses: AccessDeniedException, 400, a client fault, not retried by the store', async () => {
    const getAssets = routes.find((route) => route.method === 'GET' && route.path === '/assets')!.handler;
    const refusal = await iam
      .authorize(getAssets, [deleteOn(mainArn, bookingLeaseEntity.partitionKey({ account_key: 'ACCOUNT#A' }))])
      .then(
        () => undefined,
        (error: unknown) => error as Error & Record<string, any>,
      );
    expect(refusal?.name).toBe('AccessDeniedException');
    expect(refusal?.message).toBe(
      `User: arn:aws:sts::000000000000:assumed-role/GetAssetsRole/GetAssets is not authorized to perform: dynamodb:DeleteItem on resource: ${mainArn} because no identity-based policy allows the dynamodb:DeleteItem action`,
    );
    expect(refusal?.$fault).toBe('client');
    expect(refusal?.$metadata.httpStatusCode).toBe(400);
    expect(retryReason(refusal)).toBeUndefined();
  });

  it("let the webhook functions' event sources read under their roles: the stream, the delivery queue", async () => {
    const { mainTableStream, webhookDeliveries } = iam.resources;
    expect(mainTableStream).toBe(`${mainArn}/stream/local`);
    for (const action of ['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords'])
      expect(await allowed(WEBHOOK_HANDLERS.dispatcher, { action, resource: mainTableStream }), action).toBe(true);
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:SendMessage'])
      expect(await allowed(WEBHOOK_HANDLERS.delivery, { action, resource: webhookDeliveries }), action).toBe(true);
    // A route reads neither.
    expect(await allowed(BOOKING_FUNCTIONS[0]!, { action: 'sqs:ReceiveMessage', resource: webhookDeliveries })).toBe(
      false,
    );
  });

  it('name every function the local runtime runs: each route, task, sweep and webhook function has a role', () => {
    expect(LOCAL_TASK_HANDLERS).toEqual(SETTLEMENT_TASK_HANDLERS);
    expect(LOCAL_SWEEP_HANDLER).toBe(SETTLEMENT_SWEEP_HANDLER);
    expect(LOCAL_WEBHOOK_HANDLERS).toEqual(WEBHOOK_HANDLERS);
    const handlers = [
      ...routes.map((route) => route.handler),
      ...Object.values(LOCAL_TASK_HANDLERS),
      LOCAL_SWEEP_HANDLER,
      ...Object.values(LOCAL_WEBHOOK_HANDLERS),
      ...Object.values(EVENT_HANDLERS),
    ];
    for (const handler of handlers) expect(roles.functions[handler], handler).toBeDefined();
  });
});
