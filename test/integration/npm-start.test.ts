import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usCustomerBody, validSsn } from '../support/customer-bodies.js';
import { freePort } from '../../infra/local/dynamodb.js';
import { sign } from '../../lib/http/signature.js';

const execFileAsync = promisify(execFile);

/**
 * `npm start` as a user runs it: real processes, each in its own process group so afterAll can kill
 * everything it started, whatever happened. Every wait is bounded.
 */
const REPO = resolve(import.meta.dirname, '..', '..');
const started: ChildProcess[] = [];
const dirs: string[] = [];

interface Instance {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function npmStart(port: number, dataDir: string): Instance {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: REPO,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, DYNAMODB_PORT: '' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  return { child, output: () => output, exited };
}

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)),
  ]);

const portOpen = (port: number) =>
  new Promise<boolean>((resolveOpen) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => (socket.destroy(), resolveOpen(true)));
    socket.once('error', () => resolveOpen(false));
  });

async function running(port: number, dataDir: string): Promise<Instance> {
  const instance = npmStart(port, dataDir);
  await until(
    'the service to listen',
    () =>
      instance.output().includes('Service listening')
        ? true
        : instance.child.exitCode !== null
          ? Promise.reject(new Error(instance.output()))
          : undefined,
    150_000,
  );
  return instance;
}

const stackInfo = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, 'local-stack.json'), 'utf8'));
const time = async (port: number) => (await fetch(`http://127.0.0.1:${port}/time`)).status;

afterAll(async () => {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
  dirs.push(dir);
  return dir;
};

// Several JVMs start in sequence here, on a machine other test files are loading too.
vi.setConfig({ testTimeout: 240_000 });

/** A free port other than `taken` (two free ports asked for before either is bound may be the same). */
async function anotherFreePort(taken: number): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port !== taken) return port;
  }
}

describe('npm start', () => {
  // One instance serves the first tests and the second, on another data directory, the last; both start at
  // once (a start is a tsx compile, a JVM and the deployed roles read: tens of seconds on a loaded machine,
  // mostly waiting on one core). The last test stops them.
  let first: Instance;
  let second: Instance;
  let port: number;
  let dataDir: string;
  let portB: number;
  let dirB: string;
  beforeAll(async () => {
    port = await freePort();
    portB = await anotherFreePort(port);
    dataDir = newDataDir();
    dirB = newDataDir();
    [first, second] = await Promise.all([running(port, dataDir), running(portB, dirB)]);
  }, 200_000);

  // The first two tests read the running instances and start nothing that lasts: they run at once (the
  // context's expect, as concurrent tests need); the last one stops both instances, after them.
  it.concurrent('refuses a busy port and a data directory in use within seconds, touching nothing of the running instance', async ({
    expect,
  }) => {
    const info = stackInfo(dataDir);
    expect(info.pid).toBeGreaterThan(0);
    const dynamoPort = Number(new URL(info.dynamodb_endpoint).port);
    expect(dynamoPort).not.toBe(port);

    // Same port, another data directory; and same data directory, another port (both at once: neither
    // touches what the other does).
    const samePort = npmStart(port, newDataDir());
    const sameDir = npmStart(await freePort(), dataDir);
    const [samePortExit, sameDirExit] = await Promise.all([
      within(samePort.exited, 30_000, 'a second instance on a busy port'),
      within(sameDir.exited, 30_000, 'a second instance on a data directory in use'),
    ]);
    expect(samePortExit).toBe(1);
    expect(samePort.output()).toMatch(new RegExp(`port ${port} .*in use`));
    expect(sameDirExit).toBe(1);
    expect(sameDir.output()).toMatch(/data directory .* stop it first/);

    // The first is untouched: its state file, its lock, its service.
    expect(stackInfo(dataDir)).toEqual(info);
    expect(existsSync(join(dataDir, 'instance.lock'))).toBe(true);
    expect(await time(port)).toBe(200);
  });

  it.concurrent('writes one JSON line per request, as on Lambda (a 200, a 400, a 403), and no line carries the secret, the passphrase or a tax id', async ({
    expect,
  }) => {
    const instance = first;
    // The walkthrough's first step: the ops CLI finds the running instance through DATA_DIR.
    const { stdout } = await execFileAsync(
      'npm',
      ['run', '-s', 'admin', '--', 'platform', 'create', '--name', 'Log Check', '--reason', 'test'],
      {
        cwd: REPO,
        env: { ...process.env, DATA_DIR: dataDir },
      },
    );
    const platform = JSON.parse(stdout) as {
      platform_code: string;
      api_key: string;
      api_secret: string;
      passphrase: string;
    };
    const call = async (method: string, path: string, body?: unknown, passphrase = platform.passphrase) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        body: text,
        headers: {
          'Content-Type': 'application/json',
          'X-SVC-API-KEY': platform.api_key,
          'X-SVC-PASSPHRASE': passphrase,
          'X-SVC-TIMESTAMP': timestamp,
          'X-SVC-SIGNED': sign(Buffer.from(platform.api_secret, 'base64'), timestamp, method, path, text ?? '{}'),
        },
      });
      return { status: response.status, requestId: response.headers.get('x-request-id')! };
    };

    // A valid SSN: area 500-599, group 01-99, serial 0001-9999.
    const taxId = validSsn();
    const customer = usCustomerBody(taxId, Date.now());
    const calls = [
      { route: 'GET /accounts', expected: 200, ...(await call('GET', '/accounts')) },
      {
        route: 'POST /participants/customers/new',
        expected: 201,
        ...(await call('POST', '/participants/customers/new', customer)),
      },
      // A refused body carrying the tax id: a log of bodies or of the problems' values would show it.
      {
        route: 'POST /participants/customers/new',
        expected: 400,
        ...(await call('POST', '/participants/customers/new', { tax_id: taxId, first_name: 'x' })),
      },
      { route: 'POST /transfers', expected: 400, ...(await call('POST', '/transfers', { amount: 'lots' })) },
      {
        route: 'GET /accounts',
        expected: 403,
        ...(await call('GET', '/accounts', undefined, `${platform.passphrase}x`)),
      },
    ];
    expect(calls.map((made) => made.status)).toEqual(calls.map((made) => made.expected));

    // Each line is written when its request ends; give the pipe a moment.
    const lines = await until(
      'the request lines',
      () => {
        const requestLines = instance
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((line) => line.message === 'request');
        return calls.every((made) => requestLines.some((line) => line.request_id === made.requestId))
          ? requestLines
          : undefined;
      },
      10_000,
    );
    for (const made of calls) {
      const mine = lines.filter((line) => line.request_id === made.requestId);
      expect(mine, made.route).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        route: made.route,
        status: made.expected,
        latency_ms: expect.any(Number),
        service: expect.any(String),
        timestamp: expect.any(String),
      });
      if (made.expected === 403) {
        expect(mine[0]).toMatchObject({
          level: 'WARN',
          error_kind: 'AuthenticationError',
          auth_failure: 'invalid passphrase',
        });
        // Refused before the signature held: no platform is named on the caller's word.
        expect(mine[0]).not.toHaveProperty('platform_code');
      } else expect(mine[0]).toMatchObject({ platform_code: platform.platform_code });
      if (made.expected === 400) expect(mine[0]).toMatchObject({ level: 'INFO', error_kind: 'ValidationError' });
      if (made.expected < 300) expect(mine[0]).toMatchObject({ level: 'INFO' });
      if (made.expected < 300) expect(mine[0]).not.toHaveProperty('error_kind');
    }
    const everything = instance.output();
    for (const secret of [platform.api_secret, platform.passphrase, taxId]) expect(everything).not.toContain(secret);
  });

  it('a second instance on another data directory runs its own DynamoDB Local; SIGINT stops the first cleanly, its data directory can be used again, and SIGTERM stops an instance and its DynamoDB Local', async () => {
    const b = second;
    const dynamoA = Number(new URL(stackInfo(dataDir).dynamodb_endpoint).port);
    const dynamoB = Number(new URL(stackInfo(dirB).dynamodb_endpoint).port);
    expect(dynamoA).not.toBe(dynamoB);

    first.child.kill('SIGINT');
    await within(first.exited, 20_000, 'stopping on SIGINT');
    await until(
      'DynamoDB Local of the first to stop',
      async () => ((await portOpen(dynamoA)) ? undefined : true),
      10_000,
    );
    expect(existsSync(join(dataDir, 'local-stack.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'instance.lock'))).toBe(false);
    expect(await time(portB)).toBe(200);

    const again = await running(port, dataDir);
    expect(await time(port)).toBe(200);
    again.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    await within(Promise.all([again.exited, b.exited]), 20_000, 'stopping both on SIGTERM');
    await until(
      'DynamoDB Local of the second to stop',
      async () => ((await portOpen(dynamoB)) ? undefined : true),
      10_000,
    );
    expect(await portOpen(portB)).toBe(false);
    expect(existsSync(join(dirB, 'local-stack.json'))).toBe(false);
    expect(existsSync(join(dirB, 'instance.lock'))).toBe(false);
  });
});
