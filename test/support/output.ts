import { afterAll, beforeAll } from 'vitest';

/** One JSON line the process wrote: a log line, or an EMF document (`_aws.CloudWatchMetrics` beside the values). */
export type JsonLine = Record<string, any>;

export interface CapturedOutput {
  /** Everything written to stdout and stderr so far, as written. */
  text(): string;
  /** Every JSON object written so far (a write may hold several lines). */
  lines(): JsonLine[];
  /** The EMF documents among them (what CloudWatch turns into metrics). */
  emf(): JsonLine[];
}

/**
 * Records what this test file's process writes to stdout and stderr (still passing it through), from the
 * file's start to its end: what is asserted is what the Powertools logger and metrics really wrote, not
 * calls to a mock. A file that asserts metrics turns them on before its context is built (vitest.config.ts
 * turns them off): `vi.hoisted(() => { process.env.POWERTOOLS_METRICS_DISABLED = 'false'; })`.
 */
export function captureOutput(): CapturedOutput {
  const written: string[] = [];
  const restore: (() => void)[] = [];
  beforeAll(() => {
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        written.push(String(chunk));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => {
        stream.write = original as typeof stream.write;
      });
    }
  });
  afterAll(() => {
    for (const undo of restore) undo();
  });
  const lines = () =>
    written
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as JsonLine);
  return {
    text: () => written.join(''),
    lines,
    emf: () => lines().filter((line) => line._aws?.CloudWatchMetrics),
  };
}
