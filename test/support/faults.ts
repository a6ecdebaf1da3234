import type { AppContext } from '../../lib/context.js';
import { clientWith, ctx, testContext } from './context.js';
import { serviceFor, type TestService } from './service.js';

/**
 * A server whose process dies right after a transaction committed, before anything else happens: after
 * `skip` TransactWriteItems calls go through, the next one reaches DynamoDB and commits, then the caller gets
 * an error instead of the answer (at the SDK's outermost step, so its retries can't hide it). Later calls go
 * through normally, unless `dead`: then no transaction is sent after the crash, and one that was on its way
 * (sent concurrently, as an award distribution's lanes are) commits but answers with the crash too, as work
 * running beside the crashed call would end with the process. Other calls (the idempotency claim's release)
 * still go through. Send the request that should crash through it (`via`); the retry goes to the file's
 * ordinary server, as a client's retry reaches another Lambda container.
 *
 * Its context is `base` (this file's context by default) with the crashing DynamoDB client: the same clock,
 * configuration, settlement workflow and logger.
 */
export function serviceCrashingAfterCommit(
  options: { skip?: number; base?: AppContext; dead?: boolean } = {},
): TestService {
  let skip = options.skip ?? 0;
  let crashed = false;
  const crash = () =>
    Object.assign(new Error('the process died after its transaction committed'), { name: 'CrashAfterCommit' });
  const db = clientWith(
    (next, context) => async (args) => {
      const transaction = context.commandName === 'TransactWriteItemsCommand';
      if (transaction && crashed && options.dead) throw crash();
      const result = await next(args);
      if (transaction && crashed && options.dead) throw crash();
      if (transaction && !crashed) {
        if (skip-- > 0) return result;
        crashed = true;
        throw crash();
      }
      return result;
    },
    'crashAfterCommit',
    'initialize',
  );
  return serviceFor({ ...(options.base ?? ctx), db });
}

type Middleware = Parameters<typeof clientWith>[0];

/**
 * A server whose context reaches DynamoDB Local through a client carrying one fault-injecting middleware
 * (`clientWith`: at `deserialize` it sees every SDK attempt, at `initialize` every call once). The test's
 * requests go through it (`via`); setting up and checking go through the file's ordinary server.
 */
export function serviceWith(
  middleware: Middleware,
  name: string,
  step: 'initialize' | 'deserialize' = 'deserialize',
  options: { maxAttempts?: number } = {},
): TestService {
  return serviceFor(testContext({ db: clientWith(middleware, name, step, options) }));
}
