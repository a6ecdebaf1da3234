import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  type RequestValidator,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { MAIN_TABLE, TTL_TABLE } from '../lib/store/table/tables.js';
import { routeId, type Route } from './routes.js';
import { grantBookingQueue, grantRateLimitCounter, grantTable, type StackBase } from './stack-base.js';

/**
 * Routes whose use case books through the group-commit engine (lib/ledger/engine.ts): they delete the
 * booking queue's entries and lease (`grantBookingQueue`). The local runtime runs every test under these
 * roles, so a booking route missing here fails its tests with AccessDeniedException.
 */
export const BOOKING_ROUTES: readonly Pick<Route, 'method' | 'path'>[] = [
  { method: 'POST', path: '/transfers' },
  { method: 'POST', path: '/rewards' },
  { method: 'POST', path: '/awards/fund' },
  { method: 'POST', path: '/awards/distribute' },
  { method: 'POST', path: '/liquidity/execute' },
  { method: 'POST', path: '/convert_withdraw/execute' },
];

/** The API's one stage (the first segment of every URL). */
export const API_STAGE = 'v1';

/** The REST API with one function and one method per row of the route table. */
export function addApi(base: StackBase, table: readonly Route[]): RestApi {
  const { api, requestValidator } = createApi(base.stack);
  addRoutes(base, api, requestValidator, table);
  return api;
}

function createApi(stack: Stack): { api: RestApi; requestValidator: RequestValidator } {
  const accessLogs = new LogGroup(stack, 'ApiAccessLogs', { retention: RetentionDays.ONE_MONTH });
  const api = new RestApi(stack, 'Api', {
    restApiName: 'trading-settlement',
    description: 'Trading, rewards and settlement API. Requests are authenticated by signature in the Lambdas.',
    endpointTypes: [EndpointType.REGIONAL],
    // Access logging needs the account-level API Gateway CloudWatch role; a fresh account has none.
    // Retained because it is an account-wide setting other APIs may rely on.
    cloudWatchRole: true,
    cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
    deployOptions: {
      stageName: API_STAGE,
      tracingEnabled: true,
      metricsEnabled: true,
      // Execution logs for failures API Gateway itself answers; never request or response bodies.
      loggingLevel: MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      // Stage-wide ceiling so one runaway client cannot exhaust the account's Lambda concurrency.
      throttlingRateLimit: 100,
      throttlingBurstLimit: 200,
    },
  });
  // API Gateway creates its execution log group on first use, never expiring; created here first, it keeps a retention.
  const executionLogs = new LogGroup(stack, 'ApiExecutionLogs', {
    logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${API_STAGE}`,
    retention: RetentionDays.ONE_MONTH,
  });
  api.deploymentStage.node.addDependency(executionLogs);
  // Bodies and query strings are validated by the handlers' zod schemas, which report every problem at once in
  // the service's error shape; API Gateway checks what it can without changing that shape: the path
  // parameters each method declares (no request models, so no body is rejected here).
  const requestValidator = api.addRequestValidator('RequestValidator', {
    validateRequestBody: true,
    validateRequestParameters: true,
  });
  Validations.of(api).acknowledge(
    {
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        'Every route but GET /time and the API description (GET /openapi.json, /docs, and their 405 mocks) is authenticated by the HMAC signature, checked in the Lambda.',
    },
    {
      id: 'AwsSolutions::AwsSolutions-COG4',
      reason: 'Clients are platforms signing with API keys, not Cognito users.',
    },
    {
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: "API Gateway's account-level logging role; AWS documents this managed policy for it.",
    },
  );
  return { api, requestValidator };
}

/**
 * One function and one API Gateway method per route, each granted what its row of the route table implies:
 * the unsigned route nothing; a signed route reads its API key (main table) and decrypts the key's secret;
 * a POST, or a GET marked `writes`, writes the main table and keeps replay and idempotency records (and a
 * POST client-id records) in the TTL table, where every signed route counts its rate limit
 * (RATE_LIMIT_COUNTER=table); a booking route deletes its booking queue's entries.
 */
function addRoutes(base: StackBase, api: RestApi, requestValidator: RequestValidator, table: readonly Route[]): void {
  const ids = new Set<string>();
  for (const route of table) {
    const id = routeId(route);
    if (ids.has(id)) throw new Error(`routes ${route.method} ${route.path}: construct id ${id} is taken`);
    ids.add(id);

    const fn = base.addFunction(id, `${route.method} ${route.path}`, {
      handler: route.handler,
      description: `${route.method} ${route.path}`,
      environment: base.environment,
    });
    if (route.area !== null) {
      const mutates = route.method !== 'GET';
      grantTable(
        fn.function,
        base.mainTable,
        MAIN_TABLE,
        route.deletes ? 'delete' : mutates || route.writes ? 'write' : 'read',
      );
      // Releasing an idempotency key after a failure deletes it: the TTL table's only delete.
      // A GET that creates something (a quote) is claimed and made idempotent like a POST.
      if (mutates || route.writes) grantTable(fn.function, base.ttlTable, TTL_TABLE, 'delete');
      else if (base.environment.RATE_LIMIT_COUNTER === 'table') grantRateLimitCounter(fn.function, base.ttlTable);
      if (BOOKING_ROUTES.some((r) => r.method === route.method && r.path === route.path))
        grantBookingQueue(fn.function, base.mainTable);
      // Decrypt only: API secrets are created by the ops CLI, never through the API.
      base.secretsKey.grantDecrypt(fn.function);
    }

    const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => `method.request.path.${match[1]}`);
    // One invoke permission per function, on its one method of the deployed stage. Without allowTestInvoke
    // the CDK would add a second one per method for the console's test button (`test-invoke-stage`): 42
    // resources of CloudFormation's 500.
    const integration = new LambdaIntegration(fn.function, { allowTestInvoke: false });
    api.root.resourceForPath(route.path).addMethod(route.method, integration, {
      requestValidator,
      requestParameters: Object.fromEntries(pathParameters.map((name) => [name, true])),
    });
    if (route.area === null) answerOtherMethodsWith405(api, route);
    base.routeFunctions.set(route, fn);
  }
}

/**
 * API Gateway answers a method a resource lacks with 403 "Missing Authentication Token". The unsigned
 * routes (GET /time and the API description) answer any other method with 405, as the local server does,
 * from a mock integration: no function runs. (A body of another type than JSON gets API Gateway's 415.)
 */
function answerOtherMethodsWith405(api: RestApi, route: Route): void {
  const requestId = 'method.response.header.X-Request-Id';
  api.root.resourceForPath(route.path).addMethod(
    'ANY',
    new MockIntegration({
      passthroughBehavior: PassthroughBehavior.NEVER,
      requestTemplates: { 'application/json': '{"statusCode": 405}' },
      integrationResponses: [
        {
          statusCode: '405',
          responseParameters: { [requestId]: 'context.requestId' },
          responseTemplates: { 'application/json': JSON.stringify({ error: `method not allowed on ${route.path}` }) },
        },
      ],
    }),
    { methodResponses: [{ statusCode: '405', responseParameters: { [requestId]: true } }] },
  );
}
