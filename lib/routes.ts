import type { PermissionArea } from './domain/caller.js';

/**
 * The one route table. The CDK stack (infra) makes an API Gateway method and a Lambda per row; the local server
 * routes HTTP requests with it; the OpenAPI generator describes each row. `area: null` marks the unauthenticated
 * routes: GET /time and the API description.
 *
 * Each row is also an exported constant, which the row's function module passes to its handler
 * (`routeHandler(postTrades, ...)`, `lib/http/api-handler.ts`), so the signature and idempotency middleware read
 * the function's own row. The rows are built by pure calls and the table only lists them, so a function's bundle
 * keeps its own row and esbuild drops the other 41 with the table (about 3 KiB of every function's cold start).
 * A new route is a constant here and an entry of `routes` (test/unit/routes.test.ts holds the two together).
 */
export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** API Gateway resource path, with `{param}` placeholders. */
  path: string;
  /** Handler module relative to the repository root; it exports `handler`. */
  handler: string;
  area: PermissionArea | null;
  /** A GET that stores what it answers (an RFQ stores its quote), so its function may write the main table. */
  writes?: true;
  /** A route whose use case deletes main-table items (say, a DELETE route); only such functions get DeleteItem there. */
  deletes?: true;
  /**
   * A route that stores a new secret (a webhook endpoint's), so its function may encrypt with the secrets key:
   * the secret itself, and the answer kept for X-Request-Id retries (its handler's `secretInResponse`; the
   * stack test holds the two together).
   */
  encryptsSecrets?: true;
  /**
   * A list paged by cursor (its query takes `cursor`), so its function reads the cursor key (on AWS a Secrets
   * Manager secret; the stack test holds the flag to the handler's query).
   */
  lists?: true;
}

type RouteFlags = Pick<Route, 'writes' | 'deletes' | 'encryptsSecrets' | 'lists'>;

/**
 * A row of the table: `'POST /trades'`, the handler under `functions/` without its extension, the permission
 * area, the flags. Written short, from when every function carried the whole table.
 */
function route(
  endpoint: `${Route['method']} /${string}`,
  handler: string,
  area: PermissionArea | null,
  flags?: RouteFlags,
): Route {
  const space = endpoint.indexOf(' ');
  return {
    method: endpoint.slice(0, space) as Route['method'],
    path: endpoint.slice(space + 1),
    handler: `functions/${handler}.ts`,
    area,
    ...flags,
  };
}

export const getTime = /* @__PURE__ */ route('GET /time', 'system/get-time', null);
export const getAssets = /* @__PURE__ */ route('GET /assets', 'assets/list-assets', 'assets');
export const postParticipantsCustomersNew = /* @__PURE__ */ route(
  'POST /participants/customers/new',
  'participants/create-customer',
  'participants',
);
export const postParticipantsCustomersMinor = /* @__PURE__ */ route(
  'POST /participants/customers/minor',
  'participants/create-minor',
  'participants',
);
export const getParticipants = /* @__PURE__ */ route(
  'GET /participants',
  'participants/list-participants',
  'participants',
  { lists: true },
);
export const getParticipantsEmail = /* @__PURE__ */ route(
  'GET /participants/{email}',
  'participants/get-participant',
  'participants',
);
export const getAccounts = /* @__PURE__ */ route('GET /accounts', 'accounts/list-accounts', 'accounts', {
  lists: true,
});
export const getAccountsAccountId = /* @__PURE__ */ route(
  'GET /accounts/{account_id}',
  'accounts/get-account',
  'accounts',
);
export const getAccountsAccountIdMovements = /* @__PURE__ */ route(
  'GET /accounts/{account_id}/movements',
  'accounts/list-account-movements',
  'accounts',
  { lists: true },
);
export const getMovements = /* @__PURE__ */ route('GET /movements', 'movements/list-movements', 'accounts', {
  lists: true,
});
export const postTransfers = /* @__PURE__ */ route('POST /transfers', 'transfers/create-transfer', 'transfers');
export const getTransfers = /* @__PURE__ */ route('GET /transfers', 'transfers/list-transfers', 'transfers', {
  lists: true,
});
export const getTransfersId = /* @__PURE__ */ route('GET /transfers/{id}', 'transfers/get-transfer', 'transfers');
export const postTrades = /* @__PURE__ */ route('POST /trades', 'trades/report-trade', 'trades');
export const getTrades = /* @__PURE__ */ route('GET /trades', 'trades/list-trades', 'trades', { lists: true });
export const getTradesTradeId = /* @__PURE__ */ route('GET /trades/{trade_id}', 'trades/get-trade', 'trades');
export const getLiquidityRfq = /* @__PURE__ */ route('GET /liquidity/rfq', 'liquidity/request-quote', 'liquidity', {
  writes: true,
});
export const postLiquidityRfq = /* @__PURE__ */ route(
  'POST /liquidity/rfq',
  'liquidity/request-quote-body',
  'liquidity',
);
export const getIndex = /* @__PURE__ */ route('GET /index', 'pricing/list-index-prices', 'liquidity');
export const postLiquidityExecute = /* @__PURE__ */ route(
  'POST /liquidity/execute',
  'liquidity/execute-quote',
  'liquidity',
);
export const getPaymentsStatus = /* @__PURE__ */ route(
  'GET /payments/status',
  'payments/list-payment-status',
  'payments',
  { lists: true },
);
export const postRewards = /* @__PURE__ */ route('POST /rewards', 'rewards/issue-reward', 'rewards');
export const postAwardsFund = /* @__PURE__ */ route('POST /awards/fund', 'awards/fund-awards', 'awards');
export const postAwardsDistribute = /* @__PURE__ */ route(
  'POST /awards/distribute',
  'awards/distribute-awards',
  'awards',
);
export const getConvertWithdrawRfq = /* @__PURE__ */ route(
  'GET /convert_withdraw/rfq',
  'convert-withdraw/request-quote',
  'convert_withdraw',
  { writes: true },
);
export const getWithdrawalsRequests = /* @__PURE__ */ route(
  'GET /withdrawals/requests',
  'withdrawals/list-withdrawal-requests',
  'withdrawals',
  { lists: true },
);
export const getWithdrawalsRequestsId = /* @__PURE__ */ route(
  'GET /withdrawals/requests/{id}',
  'withdrawals/get-withdrawal-request',
  'withdrawals',
);
export const postConvertWithdrawExecute = /* @__PURE__ */ route(
  'POST /convert_withdraw/execute',
  'convert-withdraw/execute-quote',
  'convert_withdraw',
);
export const getOpenapiJson = /* @__PURE__ */ route('GET /openapi.json', 'docs/get-openapi', null);
export const getDocs = /* @__PURE__ */ route('GET /docs', 'docs/get-docs', null);
export const getDocsRedocStandaloneJs = /* @__PURE__ */ route(
  'GET /docs/redoc.standalone.js',
  'docs/get-docs-script',
  null,
);
export const getEvents = /* @__PURE__ */ route('GET /events', 'events/list-events', 'webhooks', { lists: true });
export const getEventsId = /* @__PURE__ */ route('GET /events/{id}', 'events/get-event', 'webhooks');
export const postEventsIdRedeliver = /* @__PURE__ */ route(
  'POST /events/{id}/redeliver',
  'events/redeliver-event',
  'webhooks',
);
export const postWebhooksEndpoints = /* @__PURE__ */ route(
  'POST /webhooks/endpoints',
  'webhooks/create-endpoint',
  'webhooks',
  { encryptsSecrets: true },
);
export const getWebhooksEndpoints = /* @__PURE__ */ route(
  'GET /webhooks/endpoints',
  'webhooks/list-endpoints',
  'webhooks',
);
export const getWebhooksEndpointsId = /* @__PURE__ */ route(
  'GET /webhooks/endpoints/{id}',
  'webhooks/get-endpoint',
  'webhooks',
);
export const patchWebhooksEndpointsId = /* @__PURE__ */ route(
  'PATCH /webhooks/endpoints/{id}',
  'webhooks/update-endpoint',
  'webhooks',
);
export const deleteWebhooksEndpointsId = /* @__PURE__ */ route(
  'DELETE /webhooks/endpoints/{id}',
  'webhooks/delete-endpoint',
  'webhooks',
  { deletes: true },
);
export const postWebhooksEndpointsIdRotateSecret = /* @__PURE__ */ route(
  'POST /webhooks/endpoints/{id}/rotate_secret',
  'webhooks/rotate-secret',
  'webhooks',
  { encryptsSecrets: true },
);
export const postWebhooksEndpointsIdTest = /* @__PURE__ */ route(
  'POST /webhooks/endpoints/{id}/test',
  'webhooks/test-endpoint',
  'webhooks',
);
export const getWebhooksEndpointsIdAttempts = /* @__PURE__ */ route(
  'GET /webhooks/endpoints/{id}/attempts',
  'webhooks/list-attempts',
  'webhooks',
  { lists: true },
);

/** The one route table: every row above, in this order. */
export const routes: readonly Route[] = [
  getTime,
  getAssets,
  postParticipantsCustomersNew,
  postParticipantsCustomersMinor,
  getParticipants,
  getParticipantsEmail,
  getAccounts,
  getAccountsAccountId,
  getAccountsAccountIdMovements,
  getMovements,
  postTransfers,
  getTransfers,
  getTransfersId,
  postTrades,
  getTrades,
  getTradesTradeId,
  getLiquidityRfq,
  postLiquidityRfq,
  getIndex,
  postLiquidityExecute,
  getPaymentsStatus,
  postRewards,
  postAwardsFund,
  postAwardsDistribute,
  getConvertWithdrawRfq,
  getWithdrawalsRequests,
  getWithdrawalsRequestsId,
  postConvertWithdrawExecute,
  getOpenapiJson,
  getDocs,
  getDocsRedocStandaloneJs,
  getEvents,
  getEventsId,
  postEventsIdRedeliver,
  postWebhooksEndpoints,
  getWebhooksEndpoints,
  getWebhooksEndpointsId,
  patchWebhooksEndpointsId,
  deleteWebhooksEndpointsId,
  postWebhooksEndpointsIdRotateSecret,
  postWebhooksEndpointsIdTest,
  getWebhooksEndpointsIdAttempts,
];

/** How the middleware finds the route of a request's method and API Gateway resource path (`event.resource`). */
export type RouteOf = (method: string, resource: string) => Route | undefined;

/**
 * A function's own route, for the requests made to it: a request with another method or resource (which API
 * Gateway never sends it) finds no route, as it would in the table.
 */
export function onlyRoute(own: Route): RouteOf {
  return (method, resource) => (method === own.method && resource === own.path ? own : undefined);
}

/** Finds the route for a method and an API Gateway resource path (as in `event.resource`). */
export function routeFor(method: string, resource: string): Route | undefined {
  return routes.find((route) => route.method === method && route.path === resource);
}
