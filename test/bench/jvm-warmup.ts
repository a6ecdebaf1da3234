import { readdirSync, readFileSync } from 'node:fs';
import { cpuMsOfStat } from './stats.js';

/**
 * DynamoDB Local is a JVM. For its first tens of seconds under a kind of request it has not served much yet
 * (the list queries after a seeding of writes, say), HotSpot's C2 compiler thread keeps compiling and
 * recompiling its request path and takes 0.3 to 0.7 of a core on its own (measured per thread from /proc:
 * 0.54 of 1.08 cores while one platform listed, 0.02 of 0.60 after 20 s). On two cores that is a third
 * process competing with the service and the emulator's own request threads, and it fades as the code
 * settles. DynamoDB on AWS has no such phase, so a scenario that compares latencies under two loads
 * (isolation) measures each in the emulator's steady state: after `settle`.
 */

/** CPU milliseconds the JIT compiler threads of process `pid` have used, or null where /proc can't tell. */
export function compilerCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  let total = 0;
  let found = false;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  for (const task of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // HotSpot names them "C1 CompilerThread0", "C2 CompilerThread0"..., cut to 15 characters by the kernel.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (!/^C[12] CompilerThre/.test(name)) continue;
    found = true;
    total += cpuMsOfStat(stat);
  }
  return found ? total : null;
}

export interface Settling {
  /** Seconds waited until the compiler threads stayed under the threshold for a whole window (or the cap). */
  seconds: number;
  /** False when the cap was reached first, or /proc could not be read (then it waited `fallbackMs`). */
  settled: boolean;
}

export interface SettleOptions {
  /** A window the compiler threads must stay quiet over. */
  windowMs?: number;
  /** Cores the compiler threads may use over a window and still count as quiet. */
  quietCores?: number;
  /** The longest wait. */
  maxMs?: number;
  /** The wait where the compiler threads can't be read (another OS). */
  fallbackMs?: number;
}

/**
 * Waits, while the caller keeps the emulator busy with the load it is about to measure, until the JVM's
 * compiler threads have used under `quietCores` of a core over one `windowMs` window.
 */
export async function settle(pid: number | undefined, options: SettleOptions = {}): Promise<Settling> {
  const { windowMs = 2_000, quietCores = 0.05, maxMs = 60_000, fallbackMs = 20_000 } = options;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  let before = compilerCpuMs(pid);
  if (before === null) {
    await new Promise((resolve) => setTimeout(resolve, fallbackMs));
    return { seconds: elapsed(), settled: false };
  }
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const now = compilerCpuMs(pid);
    if (now === null) return { seconds: elapsed(), settled: false };
    if ((now - before) / windowMs < quietCores) return { seconds: elapsed(), settled: true };
    if (performance.now() - started >= maxMs) return { seconds: elapsed(), settled: false };
    before = now;
  }
}
