import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stopChild } from '../../infra/local/dynamodb.js';

/** A process that ignores SIGTERM, as an overwhelmed JVM may, and says when it is listening for it. */
const STUBBORN = "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); process.stdout.write('ready');";

async function stubbornChild(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', STUBBORN], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((ready) => child.stdout!.once('data', ready));
  return child;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number): Promise<boolean> {
  for (let waited = 0; waited < 5_000 && isRunning(pid); waited += 50) await new Promise((r) => setTimeout(r, 50));
  return !isRunning(pid);
}

/**
 * A process that starts a stubborn child under `killOnExit`, prints the child's pid, then ends by `ending`
 * (code run after that): its output and exit status.
 */
function parentThatEnds(ending: string): { childPid: number; status: number | null; stderr: string } {
  const module = JSON.stringify(pathToFileURL(resolve('infra/local/dynamodb.ts')).href);
  const script = [
    "import { spawn } from 'node:child_process';",
    `const { killOnExit } = await import(${module});`,
    `const child = spawn(process.execPath, ['-e', ${JSON.stringify(STUBBORN)}], { stdio: ['ignore', 'pipe', 'ignore'] });`,
    'killOnExit(child);',
    "await new Promise((ready) => child.stdout.once('data', ready));",
    'process.stdout.write(String(child.pid));',
    ending,
  ].join('\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { childPid: Number(run.stdout), status: run.status, stderr: run.stderr };
}

describe('how the local stack stops DynamoDB Local (infra/local/dynamodb.ts)', () => {
  it('stopChild kills a child that ignores SIGTERM once the grace period is over', async () => {
    const child = await stubbornChild();

    await stopChild(child, 200);

    expect(child.signalCode).toBe('SIGKILL');
    expect(await gone(child.pid!)).toBe(true);
  });

  it('stopChild returns at once for a child a signal already ended (no exit code: it used to wait for ever)', async () => {
    const child = await stubbornChild();
    child.kill('SIGKILL');
    await new Promise((ended) => child.once('exit', ended));
    expect(child.exitCode).toBeNull();

    const outcome = await Promise.race([
      stopChild(child, 60_000).then(() => 'stopped'),
      new Promise((r) => setTimeout(() => r('still waiting'), 2_000)),
    ]);

    expect(outcome).toBe('stopped');
  });

  it('killOnExit: a parent that dies of an uncaught error leaves no child behind', async () => {
    const { childPid, status, stderr } = parentThatEnds("throw new Error('EPIPE, say');");

    expect(status, stderr).toBe(1);
    expect(childPid).toBeGreaterThan(0);
    expect(await gone(childPid)).toBe(true);
  });

  it('killOnExit: a parent that calls process.exit without stopping its child leaves none behind', async () => {
    const { childPid, status, stderr } = parentThatEnds('process.exit(0);');

    expect(status, stderr).toBe(0);
    expect(childPid).toBeGreaterThan(0);
    expect(await gone(childPid)).toBe(true);
  });
});
