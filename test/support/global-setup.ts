// The SDK's Node-version notice is about Lambda runtimes, not this test run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import type { TestProject } from 'vitest/node';
import { ensureTables, freePort, startDynamoLocal } from '../../infra/local/dynamodb.js';
import { TEST_TABLES } from './tables.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

/** Starts DynamoDB Local once per run (in memory) and creates the tables every test file shares. */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoLocal({ port: await freePort() });
  await ensureTables(dynamo.endpoint, TEST_TABLES);
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
  };
}
