import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { testEndpoint } from '../support/context.js';
import { generateOperations } from './generator.js';
import { simulate, SimulationFailure } from './driver.js';
import { byProfile } from '../support/profile.js';

const execFileAsync = promisify(execFile);

/**
 * The seeded simulation in the suite: under `npm run test:long`, one seed on the suite's DynamoDB Local with
 * tables of its own (the run's unscoped ledger check must see only its data). `npm test` checks the
 * generator and the command line only: CI runs two seeds as steps of their own (`.ci/run`), each on a
 * DynamoDB Local of its own, where the simulation's load can't slow the suite's other files. The long profile
 * is `npm run simulate -- --seed N --ops 10000`.
 */

/** Seeds run here: none under `npm test` (CI runs seeds 20261128 and 4242 as steps of their own), seed 7 under `npm run test:long`. */
const SEEDS = byProfile([], [7]);
const OPS = 80;

describe('seeded simulation (short profile)', () => {
  it('draws the same operations from the same seed, and other operations from another', () => {
    const shape = { platforms: 3, customersPerPlatform: 12 };
    expect(generateOperations(7, 300, shape)).toEqual(generateOperations(7, 300, shape));
    expect(generateOperations(8, 300, shape)).not.toEqual(generateOperations(7, 300, shape));
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: ${OPS} operations under faults keep every invariant`, { timeout: 300_000 }, async () => {
      try {
        const summary = await simulate({
          seed,
          ops: OPS,
          endpoint: testEndpoint(),
          tables: { main: `sim-${seed}-main`, ttl: `sim-${seed}-windows` },
          concurrency: 12,
          roles: inject('deployedRoles'),
        });
        expect(Object.values(summary.faults).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
        expect(summary.invariants.balance_changes).toBeGreaterThan(0);
      } catch (error) {
        // The failure names the seed, the operation and the faults so far: replay it with npm run simulate.
        if (error instanceof SimulationFailure) expect.fail(error.message);
        throw error;
      }
    });
  }

  it('refuses a bad --seed or --ops with its usage and exit status 2', async () => {
    // The real entry point, each case a process of its own, all at once.
    const cases = [
      ['--seed', 'abc', '--ops', '10'],
      ['--seed', '1'],
      ['--seed', '1', '--ops', '0'],
      ['--seed', '1', '--ops', '10', '--speed', 'x'],
    ];
    const runs = await Promise.all(
      cases.map((args) =>
        execFileAsync(process.execPath, ['--import', 'tsx', 'test/simulation/run.ts', ...args], {
          encoding: 'utf8',
        }).then(
          () => ({ args, status: 0, stderr: '' }),
          (error: { code?: number; stderr?: string }) => ({ args, status: error.code, stderr: error.stderr ?? '' }),
        ),
      ),
    );
    for (const run of runs) {
      expect(run.status, `${run.args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain('usage: npm run simulate -- --seed N --ops COUNT');
    }
  });
});
