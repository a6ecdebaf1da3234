import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { DeployedRoles } from '../../infra/local/iam/roles.js';
import { testContext } from '../support/context.js';
import { fund, transferBody } from '../support/ledger.js';
import { newPlatform, serviceFor } from '../support/service.js';

/**
 * The local stack runs every function under its deployed role (docs/run-as-deployed.md). A grant taken away
 * from the roles the stack deploys makes the route that needs it fail here as it would on AWS, with the refusal
 * logged naming function, action and resource (as every signed GET would have answered 500 on a first deploy,
 * its role lacking the TTL table's UpdateItem that counts its rate limit).
 */
const LIST_ASSETS = 'functions/assets/list-assets.ts';

/** The deployed roles with `handler`'s statements on the TTL table removed. */
function withoutTtlGrant(handler: string): DeployedRoles {
  const roles = structuredClone(inject('deployedRoles'));
  const role = roles.functions[handler]!;
  role.statements = role.statements.filter(
    (statement) => ![statement.Resource].flat().some((resource) => resource.endsWith('table/{{TtlTable}}')),
  );
  return roles;
}

/** The deployed roles with `handler`'s delete on the booking queue's keys removed. */
function withoutBookingQueueGrant(handler: string): DeployedRoles {
  const roles = structuredClone(inject('deployedRoles'));
  const role = roles.functions[handler]!;
  role.statements = role.statements.filter(
    (statement) => !JSON.stringify(statement.Condition ?? {}).includes('BOOKINGS#'),
  );
  return roles;
}

/** A service counting rate limits in the TTL table, as the stack configures it. */
function tableCountedService(roles?: DeployedRoles) {
  const ctx = testContext({ env: { RATE_LIMIT_COUNTER: 'table' }, roles });
  return { ctx, service: serviceFor(ctx) };
}

afterEach(() => vi.restoreAllMocks());

describe('the local runtime under the deployed roles', () => {
  it('answers a signed GET whose role counts its rate limit in the TTL table', async () => {
    const { service } = tableCountedService();
    const platform = await newPlatform({ on: service });
    expect((await platform.get('/assets')).status).toBe(200);
  });

  it('fails GET /assets with 500 and logs AccessDeniedException once its role lacks the TTL table grant', async () => {
    const { ctx, service } = tableCountedService(withoutTtlGrant(LIST_ASSETS));
    const errors = vi.spyOn(ctx.logger, 'error').mockImplementation(() => undefined);
    const platform = await newPlatform({ on: service });

    const response = await platform.get('/assets');

    expect(response.status).toBe(500);
    const refusal = errors.mock.calls.find(([message]) => String(message).startsWith('access denied'));
    expect(refusal?.[1]).toMatchObject({
      function: 'GetAssets',
      action: 'dynamodb:UpdateItem',
      resource: `arn:aws:dynamodb:${ctx.config.AWS_REGION}:000000000000:table/${ctx.tables.ttl}`,
    });
    // The request log names the error the SDK would have thrown, once: a refusal is not retried.
    const logged = errors.mock.calls.filter(([, detail]) => (detail as any)?.error_kind === 'AccessDeniedException');
    expect(logged).toHaveLength(1);
    expect(errors.mock.calls.filter(([message]) => String(message).startsWith('access denied'))).toHaveLength(1);
  });

  it('cannot group-commit a hot account once POST /transfers may not delete its booking queue entries', async () => {
    // Queued requests give up waiting after a second (503), not the tests' 30 s: the queue never commits here.
    const ctx = testContext({
      roles: withoutBookingQueueGrant('functions/transfers/create-transfer.ts'),
      env: { HOT_ACCOUNT_WAIT_MS: '1000' },
    });
    const errors = vi.spyOn(ctx.logger, 'error').mockImplementation(() => undefined);
    const platform = await newPlatform({ on: serviceFor(ctx) });
    await fund(platform.participantCode, 'USD', '100');

    // Concurrent debits of one account make it hot: its bookings queue, and a commit round deletes their entries.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        platform.post('/transfers', transferBody(platform, { amount: '1', client_transfer_id: `c-${i}` })),
      ),
    );

    const refusals = errors.mock.calls
      .filter(([message]) => String(message).startsWith('access denied'))
      .map(([, detail]) => detail as { function: string; action: string; leadingKeys: string[] });
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ function: 'PostTransfers', action: 'dynamodb:DeleteItem' });
      expect(refusal.leadingKeys.every((key) => key.startsWith('BOOKINGS#'))).toBe(true);
    }
    expect(results.filter((result) => result.status === 201).length).toBeLessThan(40);
  });

  it('leaves set-up code outside any function unchecked: ops credentials', async () => {
    const { service } = tableCountedService(withoutTtlGrant(LIST_ASSETS));
    // newPlatform writes the platform and its key with the context directly, as the ops CLI does.
    await expect(newPlatform({ on: service })).resolves.toBeDefined();
  });
});
