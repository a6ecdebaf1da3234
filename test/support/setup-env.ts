import { afterAll, inject, vi } from 'vitest';

// Integration tests refuse to run against anything but the DynamoDB Local this run started.
const endpoint = inject('dynamoEndpoint');
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) throw new Error(`refusing to test against ${endpoint}`);
// The SDK's Node-version notice is about Lambda runtimes, not this test run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// The files of the "parallel" project share their worker's modules (vitest.config.ts): what a file changed of
// the shared context's clock, of the environment or with spies is put back before the next file runs (this
// hook, registered first, runs after the file's own).
const environmentAtStart = { ...process.env };
afterAll(async () => {
  vi.restoreAllMocks();
  // Imported here, not above: a file sets the environment its context is built with before it imports it.
  const { ctx } = await import('./context.js');
  ctx.clock.reset();
  // A settlement runner left running would go on settling beside the worker's later files (useTestWorkflows).
  const { localRunner } = await import('./trades.js');
  if (localRunner())
    throw new Error('a settlement runner is still running after its file: start it with useTestWorkflows');
  for (const name of Object.keys(process.env)) if (!(name in environmentAtStart)) delete process.env[name];
  Object.assign(process.env, environmentAtStart);
});
