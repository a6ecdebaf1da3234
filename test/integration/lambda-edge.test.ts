import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TEST_SECRETS_KEY, TEST_TABLES } from '../support/tables.js';
import { testEndpoint } from '../support/context.js';

/**
 * The Lambda edge (`onLambda`) loads the Powertools Tracer only with TRACING=active (what the stack sets):
 * importing the X-Ray SDK installs an async hook that makes every promise of the process far dearer, so a
 * process that traces nothing must never import it. Each case is a fresh process, as a Lambda container is.
 */
function invokeTime(tracing: string | undefined): { status: number; xray: boolean } {
  const { TRACING: _inherited, ...env } = process.env;
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/lambda-edge-child.ts'], {
    encoding: 'utf8',
    env: {
      ...env,
      DYNAMODB_ENDPOINT: testEndpoint(),
      TABLE_NAME: TEST_TABLES.main,
      TTL_TABLE_NAME: TEST_TABLES.ttl,
      SECRETS_LOCAL_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'silent',
      ...(tracing !== undefined && { TRACING: tracing }),
    },
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

describe('the Lambda edge', () => {
  it('answers without importing the X-Ray SDK when tracing is off (the default)', () => {
    expect(invokeTime(undefined)).toEqual({ status: 200, xray: false });
    expect(invokeTime('off')).toEqual({ status: 200, xray: false });
  }, 120_000);

  it('loads the tracer and still answers with TRACING=active', () => {
    expect(invokeTime('active')).toEqual({ status: 200, xray: true });
  }, 60_000);
});
