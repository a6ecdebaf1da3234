// The SDK's Node-version notice is about Lambda runtimes, not this test run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureTables, freePort, startDynamoLocal } from '../../infra/local/dynamodb.js';
import { type DeployedRoles, deployedRolesInChild } from '../../infra/local/iam/roles.js';
import { createStreamFreeTables, plainTablesOf, spareStreamTablesOf, streamTablesOf } from './tables.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    /** Every function's deployed role, read once per run from the stack's constructs (test/support/context.ts). */
    deployedRoles: DeployedRoles;
    /**
     * A directory for the run's scratch files (the stack tests' cloud assemblies), removed when the run ends: a
     * worker's files share its modules, so an `afterAll` in one of them runs after the first file only.
     */
    scratchDir: string;
  }
}

/**
 * Starts DynamoDB Local once per run (in memory) and creates each worker's tables, before anything is written
 * (see tables.ts); reads the functions' deployed roles meanwhile.
 */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoLocal({ port: await freePort(), shortRun: true });
  // In a child process (the CDK's construct stack traces fail under vitest's module runner) while the tables
  // are made; started once DynamoDB Local is up, whose JVM start has a deadline. Awaited below, so a failure
  // meanwhile does not count as unhandled.
  const roles = deployedRolesInChild();
  roles.catch(() => undefined);
  const workers = Math.max(1, Number(project.config.maxWorkers) || 1);
  for (let worker = 1; worker <= workers; worker++) {
    await ensureTables(dynamo.endpoint, streamTablesOf(worker));
    await ensureTables(dynamo.endpoint, spareStreamTablesOf(worker));
    await createStreamFreeTables(dynamo.endpoint, plainTablesOf(worker));
  }
  project.provide('dynamoEndpoint', dynamo.endpoint);
  const scratchDir = mkdtempSync(join(tmpdir(), 'test-run-'));
  project.provide('scratchDir', scratchDir);
  project.provide('deployedRoles', await roles);
  return async () => {
    await dynamo.stop();
    rmSync(scratchDir, { recursive: true, force: true });
  };
}
