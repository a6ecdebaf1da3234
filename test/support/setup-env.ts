import { inject } from 'vitest';
import { useLocalTables } from '../../infra/local/local-env.js';
import { TEST_SECRETS_KEY, TEST_TABLES } from './tables.js';

// Integration tests refuse to run against anything but the DynamoDB Local this run started.
const endpoint = inject('dynamoEndpoint');
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) throw new Error(`refusing to test against ${endpoint}`);
delete process.env.SECRETS_KMS_KEY_ID;
useLocalTables(endpoint, TEST_TABLES, TEST_SECRETS_KEY);
