import { inject } from 'vitest';

// Integration tests refuse to run against anything but the DynamoDB Local this run started.
const endpoint = inject('dynamoEndpoint');
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) throw new Error(`refusing to test against ${endpoint}`);
// The SDK's Node-version notice is about Lambda runtimes, not this test run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
