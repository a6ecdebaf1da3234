import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { resetConfig } from '../../lib/config.js';

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

/** Points this process's configuration at a local DynamoDB. */
export function useLocalTables(endpoint: string, tables = LOCAL_TABLES, secretsKey = localSecretsKey()): void {
  process.env.DYNAMODB_ENDPOINT = endpoint;
  process.env.TABLE_NAME = tables.main;
  process.env.TTL_TABLE_NAME = tables.ttl;
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.SECRETS_LOCAL_KEY = secretsKey;
  resetConfig();
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
