import { readFile, rename, writeFile } from 'node:fs/promises';
import {
  CheckpointMismatchError,
  LedgerUnreachableError,
  runLedgerCheck,
  type CheckpointStore,
} from '../../lib/reconciliation/run-ledger-check.js';
import { optional, UsageError, withExitCode, type Commands } from './command.js';

const DEFAULT_SEGMENTS = 4;
const MAX_SEGMENTS = 64;

/**
 * A resume file: the scan's position per segment and the partial aggregates, rewritten whole (to a
 * temporary file, then renamed) so an interrupted write never leaves half a checkpoint.
 */
function checkpointFile(path: string): CheckpointStore {
  return {
    load: async () => {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UsageError(`--resume ${path}: not a ledger check resume file (not JSON)`);
      }
    },
    save: async (state) => {
      await writeFile(`${path}.tmp`, JSON.stringify(state));
      await rename(`${path}.tmp`, path);
    },
  };
}

/** The ledger's own check; reads only, so no --reason. */
export const reconciliationCommands: Commands = {
  'ledger check': {
    usage: `ledger check [--platform CODE] [--segments N (1-${MAX_SEGMENTS}, default ${DEFAULT_SEGMENTS})] [--resume FILE]`,
    options: { platform: { type: 'string' }, segments: { type: 'string' }, resume: { type: 'string' } },
    run: async (flags, ctx) => {
      const segmentsText = optional(flags, 'segments') ?? String(DEFAULT_SEGMENTS);
      const totalSegments = Number(segmentsText);
      if (!/^\d+$/.test(segmentsText) || totalSegments < 1 || totalSegments > MAX_SEGMENTS) {
        throw new UsageError(
          `--segments must be a whole number from 1 to ${MAX_SEGMENTS}\nusage: npm run admin -- ${reconciliationCommands['ledger check']!.usage}`,
        );
      }
      const platformCode = optional(flags, 'platform');
      const resume = optional(flags, 'resume');
      // Ctrl-C stops between pages: the progress is saved to the resume file and the run can go on later.
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const report = await runLedgerCheck(ctx, {
          scope: platformCode === undefined ? {} : { platformCode },
          totalSegments,
          checkpoint: resume === undefined ? undefined : checkpointFile(resume),
          signal: stop.signal,
        });
        // Stopped before the end: 3, so a script can tell it from a clean run and resume it.
        return withExitCode(report, !report.complete ? 3 : report.clean ? 0 : 1);
      } catch (error) {
        // An unreachable or misnamed table, or a resume file of another run: nothing was checked or written.
        if (error instanceof LedgerUnreachableError || error instanceof CheckpointMismatchError)
          throw new UsageError(error.message);
        throw error;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
  },
};
