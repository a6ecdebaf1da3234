/** Small numeric and printing helpers shared by the benchmark scenarios. */

import { readFileSync } from 'node:fs';

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export const median = (samples: readonly number[]) => percentile(samples, 50);

export function round(value: number, decimals = 2): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export function fmt(value: number | null | undefined, decimals = 1): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  return value.toFixed(decimals);
}

/** A plain-text table: columns padded to their widest cell, numbers right-aligned. */
export function table(
  title: string,
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cells = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const numeric = header.map(
    (_, column) => rows.length > 0 && rows.every((row) => /^-?[\d.]+$|^-$/.test(String(row[column] ?? ''))),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [`\n${title}`, line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
}

/** Runs `work` over `items` with at most `limit` in flight. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}

/**
 * CPU milliseconds (user and system, all threads) another process has used so far, from Linux's
 * /proc/PID/stat; null where there is no such file (another OS, or the process is gone).
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return cpuMsOfStat(stat);
}

/**
 * CPU milliseconds in a /proc stat line (a process's or one of its threads'): utime plus stime, which the
 * kernel counts in USER_HZ ticks, fixed at 100 a second for user space on Linux.
 */
export function cpuMsOfStat(stat: string): number {
  // The command name (field 2) is in parentheses and may hold spaces; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU milliseconds this process has used so far (user and system, all threads). */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
