import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseConfig, type Config } from '../../lib/config.js';

// The local stack runs on the machine's Node (20 here); AWS's runtime warning is about Lambda, not us.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Where the local stack keeps its data and tells other processes (the ops CLI) how to reach it. */
export function dataDir(): string {
  return resolve(process.env.DATA_DIR ?? '.data');
}

export const LOCAL_TABLES = { main: 'svc-main', ttl: 'svc-windows' };

export interface LocalStackInfo {
  dynamodb_endpoint: string;
  table_name: string;
  ttl_table_name: string;
  base_url: string;
  pid: number;
}

const stackFile = () => resolve(dataDir(), 'local-stack.json');

/** The AES key that encrypts API secrets at rest locally; made once and kept with the data it protects. */
export function localSecretsKey(): string {
  const file = resolve(dataDir(), 'secrets.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir(), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

/**
 * The configuration of a process working on a local DynamoDB: the environment's settings, with the endpoint,
 * tables and local secrets key replaced (and no KMS key or cursor key secret, which are AWS's). `overrides` set other variables
 * (tests shorten settlement sessions this way).
 */
export function localConfig(
  endpoint: string,
  tables = LOCAL_TABLES,
  secretsKey = localSecretsKey(),
  overrides: Record<string, string | undefined> = {},
): Config {
  return parseConfig({
    ...process.env,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: tables.main,
    TTL_TABLE_NAME: tables.ttl,
    SECRETS_LOCAL_KEY: secretsKey,
    SECRETS_KMS_KEY_ID: undefined,
    // The cursor key is local too: LIST_CURSOR_KEY if set, else derived from the local secrets key.
    LIST_CURSOR_SECRET_ARN: undefined,
    STATE_MACHINE_ARN: undefined,
    // Locally webhook receivers run on this machine (127.0.0.1, plain http).
    WEBHOOK_ALLOW_PRIVATE_URLS: process.env.WEBHOOK_ALLOW_PRIVATE_URLS ?? 'true',
    WEBHOOK_ALLOW_HTTP: process.env.WEBHOOK_ALLOW_HTTP ?? 'true',
    // One process serves every platform: requests are counted in it, without a DynamoDB call.
    RATE_LIMIT_COUNTER: process.env.RATE_LIMIT_COUNTER ?? 'memory',
    ...overrides,
  });
}

export function writeStackInfo(info: LocalStackInfo): void {
  writeFileSync(stackFile(), `${JSON.stringify(info, null, 2)}\n`);
}

export function removeStackInfo(): void {
  rmSync(stackFile(), { force: true });
}

export function readStackInfo(): LocalStackInfo | undefined {
  return existsSync(stackFile()) ? (JSON.parse(readFileSync(stackFile(), 'utf8')) as LocalStackInfo) : undefined;
}
