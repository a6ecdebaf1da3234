import type { PermissionArea } from './domain/caller.js';

/**
 * The one route table. The CDK stack (infra) makes an API Gateway method and a Lambda per row; the local server
 * routes HTTP requests with it; the signature middleware reads the permission area of the matched row.
 * `area: null` marks the unauthenticated routes: GET /time and the API description.
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
 * area, the flags. Every function carries the table (the signature and idempotency middleware read its row),
 * so its rows are written short: about 2 KiB of each bundle spelled `method:`, `path:`, `handler:`,
 * `functions/` and `.ts` 42 times.
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

export const routes: readonly Route[] = [
  route('GET /time', 'system/get-time', null),
  route('GET /assets', 'assets/list-assets', 'assets'),
  route('POST /participants/customers/new', 'participants/create-customer', 'participants'),
  route('POST /participants/customers/minor', 'participants/create-minor', 'participants'),
  route('GET /participants', 'participants/list-participants', 'participants', { lists: true }),
  route('GET /participants/{email}', 'participants/get-participant', 'participants'),
  route('GET /accounts', 'accounts/list-accounts', 'accounts', { lists: true }),
  route('GET /accounts/{account_id}', 'accounts/get-account', 'accounts'),
  route('GET /accounts/{account_id}/movements', 'accounts/list-account-movements', 'accounts', { lists: true }),
  route('GET /movements', 'movements/list-movements', 'accounts', { lists: true }),
  route('POST /transfers', 'transfers/create-transfer', 'transfers'),
  route('GET /transfers', 'transfers/list-transfers', 'transfers', { lists: true }),
  route('GET /transfers/{id}', 'transfers/get-transfer', 'transfers'),
  route('POST /trades', 'trades/report-trade', 'trades'),
  route('GET /trades', 'trades/list-trades', 'trades', { lists: true }),
  route('GET /trades/{trade_id}', 'trades/get-trade', 'trades'),
  route('GET /liquidity/rfq', 'liquidity/request-quote', 'liquidity', { writes: true }),
  route('POST /liquidity/rfq', 'liquidity/request-quote-body', 'liquidity'),
  route('GET /index', 'pricing/list-index-prices', 'liquidity'),
  route('POST /liquidity/execute', 'liquidity/execute-quote', 'liquidity'),
  route('GET /payments/status', 'payments/list-payment-status', 'payments', { lists: true }),
  route('POST /rewards', 'rewards/issue-reward', 'rewards'),
  route('POST /awards/fund', 'awards/fund-awards', 'awards'),
  route('POST /awards/distribute', 'awards/distribute-awards', 'awards'),
  route('GET /convert_withdraw/rfq', 'convert-withdraw/request-quote', 'convert_withdraw', { writes: true }),
  route('GET /withdrawals/requests', 'withdrawals/list-withdrawal-requests', 'withdrawals', { lists: true }),
  route('GET /withdrawals/requests/{id}', 'withdrawals/get-withdrawal-request', 'withdrawals'),
  route('POST /convert_withdraw/execute', 'convert-withdraw/execute-quote', 'convert_withdraw'),
  route('GET /openapi.json', 'docs/get-openapi', null),
  route('GET /docs', 'docs/get-docs', null),
  route('GET /docs/redoc.standalone.js', 'docs/get-docs-script', null),
  route('GET /events', 'events/list-events', 'webhooks', { lists: true }),
  route('GET /events/{id}', 'events/get-event', 'webhooks'),
  route('POST /events/{id}/redeliver', 'events/redeliver-event', 'webhooks'),
  route('POST /webhooks/endpoints', 'webhooks/create-endpoint', 'webhooks', { encryptsSecrets: true }),
  route('GET /webhooks/endpoints', 'webhooks/list-endpoints', 'webhooks'),
  route('GET /webhooks/endpoints/{id}', 'webhooks/get-endpoint', 'webhooks'),
  route('PATCH /webhooks/endpoints/{id}', 'webhooks/update-endpoint', 'webhooks'),
  route('DELETE /webhooks/endpoints/{id}', 'webhooks/delete-endpoint', 'webhooks', { deletes: true }),
  route('POST /webhooks/endpoints/{id}/rotate_secret', 'webhooks/rotate-secret', 'webhooks', { encryptsSecrets: true }),
  route('POST /webhooks/endpoints/{id}/test', 'webhooks/test-endpoint', 'webhooks'),
  route('GET /webhooks/endpoints/{id}/attempts', 'webhooks/list-attempts', 'webhooks', { lists: true }),
];

/** Finds the route for a method and an API Gateway resource path (as in `event.resource`). */
export function routeFor(method: string, resource: string): Route | undefined {
  return routes.find((route) => route.method === method && route.path === resource);
}
