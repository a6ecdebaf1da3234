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

export const routes: readonly Route[] = [
  { method: 'GET', path: '/time', handler: 'functions/system/get-time.ts', area: null },
  { method: 'GET', path: '/assets', handler: 'functions/assets/list-assets.ts', area: 'assets' },
  {
    method: 'POST',
    path: '/participants/customers/new',
    handler: 'functions/participants/create-customer.ts',
    area: 'participants',
  },
  {
    method: 'POST',
    path: '/participants/customers/minor',
    handler: 'functions/participants/create-minor.ts',
    area: 'participants',
  },
  {
    method: 'GET',
    path: '/participants',
    handler: 'functions/participants/list-participants.ts',
    area: 'participants',
    lists: true,
  },
  {
    method: 'GET',
    path: '/participants/{email}',
    handler: 'functions/participants/get-participant.ts',
    area: 'participants',
  },
  { method: 'GET', path: '/accounts', handler: 'functions/accounts/list-accounts.ts', area: 'accounts', lists: true },
  { method: 'GET', path: '/accounts/{account_id}', handler: 'functions/accounts/get-account.ts', area: 'accounts' },
  {
    method: 'GET',
    path: '/accounts/{account_id}/movements',
    handler: 'functions/accounts/list-account-movements.ts',
    area: 'accounts',
    lists: true,
  },
  {
    method: 'GET',
    path: '/movements',
    handler: 'functions/movements/list-movements.ts',
    area: 'accounts',
    lists: true,
  },
  { method: 'POST', path: '/transfers', handler: 'functions/transfers/create-transfer.ts', area: 'transfers' },
  {
    method: 'GET',
    path: '/transfers',
    handler: 'functions/transfers/list-transfers.ts',
    area: 'transfers',
    lists: true,
  },
  { method: 'GET', path: '/transfers/{id}', handler: 'functions/transfers/get-transfer.ts', area: 'transfers' },
  { method: 'POST', path: '/trades', handler: 'functions/trades/report-trade.ts', area: 'trades' },
  { method: 'GET', path: '/trades', handler: 'functions/trades/list-trades.ts', area: 'trades', lists: true },
  { method: 'GET', path: '/trades/{trade_id}', handler: 'functions/trades/get-trade.ts', area: 'trades' },
  {
    method: 'GET',
    path: '/liquidity/rfq',
    handler: 'functions/liquidity/request-quote.ts',
    area: 'liquidity',
    writes: true,
  },
  { method: 'POST', path: '/liquidity/rfq', handler: 'functions/liquidity/request-quote-body.ts', area: 'liquidity' },
  { method: 'GET', path: '/index', handler: 'functions/pricing/list-index-prices.ts', area: 'liquidity' },
  { method: 'POST', path: '/liquidity/execute', handler: 'functions/liquidity/execute-quote.ts', area: 'liquidity' },
  {
    method: 'GET',
    path: '/payments/status',
    handler: 'functions/payments/list-payment-status.ts',
    area: 'payments',
    lists: true,
  },
  { method: 'POST', path: '/rewards', handler: 'functions/rewards/issue-reward.ts', area: 'rewards' },
  { method: 'POST', path: '/awards/fund', handler: 'functions/awards/fund-awards.ts', area: 'awards' },
  { method: 'POST', path: '/awards/distribute', handler: 'functions/awards/distribute-awards.ts', area: 'awards' },
  {
    method: 'GET',
    path: '/convert_withdraw/rfq',
    handler: 'functions/convert-withdraw/request-quote.ts',
    area: 'convert_withdraw',
    writes: true,
  },
  {
    method: 'GET',
    path: '/withdrawals/requests',
    handler: 'functions/withdrawals/list-withdrawal-requests.ts',
    area: 'withdrawals',
    lists: true,
  },
  {
    method: 'GET',
    path: '/withdrawals/requests/{id}',
    handler: 'functions/withdrawals/get-withdrawal-request.ts',
    area: 'withdrawals',
  },
  {
    method: 'POST',
    path: '/convert_withdraw/execute',
    handler: 'functions/convert-withdraw/execute-quote.ts',
    area: 'convert_withdraw',
  },
  { method: 'GET', path: '/openapi.json', handler: 'functions/docs/get-openapi.ts', area: null },
  { method: 'GET', path: '/docs', handler: 'functions/docs/get-docs.ts', area: null },
  { method: 'GET', path: '/docs/redoc.standalone.js', handler: 'functions/docs/get-docs-script.ts', area: null },
  { method: 'GET', path: '/events', handler: 'functions/events/list-events.ts', area: 'webhooks', lists: true },
  { method: 'GET', path: '/events/{id}', handler: 'functions/events/get-event.ts', area: 'webhooks' },
  { method: 'POST', path: '/events/{id}/redeliver', handler: 'functions/events/redeliver-event.ts', area: 'webhooks' },
  {
    method: 'POST',
    path: '/webhooks/endpoints',
    handler: 'functions/webhooks/create-endpoint.ts',
    area: 'webhooks',
    encryptsSecrets: true,
  },
  { method: 'GET', path: '/webhooks/endpoints', handler: 'functions/webhooks/list-endpoints.ts', area: 'webhooks' },
  { method: 'GET', path: '/webhooks/endpoints/{id}', handler: 'functions/webhooks/get-endpoint.ts', area: 'webhooks' },
  {
    method: 'PATCH',
    path: '/webhooks/endpoints/{id}',
    handler: 'functions/webhooks/update-endpoint.ts',
    area: 'webhooks',
  },
  {
    method: 'DELETE',
    path: '/webhooks/endpoints/{id}',
    handler: 'functions/webhooks/delete-endpoint.ts',
    area: 'webhooks',
    deletes: true,
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{id}/rotate_secret',
    handler: 'functions/webhooks/rotate-secret.ts',
    area: 'webhooks',
    encryptsSecrets: true,
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{id}/test',
    handler: 'functions/webhooks/test-endpoint.ts',
    area: 'webhooks',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints/{id}/attempts',
    handler: 'functions/webhooks/list-attempts.ts',
    area: 'webhooks',
    lists: true,
  },
];

/** Finds the route for a method and an API Gateway resource path (as in `event.resource`). */
export function routeFor(method: string, resource: string): Route | undefined {
  return routes.find((route) => route.method === method && route.path === resource);
}
