import { ExecutionAlreadyExists, ExecutionDoesNotExist, type SFNClient } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../lib/config.js';
import { ensureSettlementRunning, useStepFunctionsClient } from '../../lib/settlement/start-settlement.js';

/**
 * The AWS sweep's decisions, against a stand-in for the Step Functions API (AWS's service, not ours; the
 * local runner covers the workflow itself). The stand-in answers StartExecution as AWS documents it: a repeat
 * with the same input while the execution is open succeeds, a name used by a closed execution is refused.
 */
const ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:Settlement';
const EXECUTION_ARN = 'arn:aws:states:us-east-1:123456789012:execution:Settlement:trade-1';
const trade = { trade_id: 'trade-1', accepted_timestamp: 1_790_000_000_000, settlement_timestamp: null };

function fakeStepFunctions(existing: { status: string } | null, options: { startedMeanwhile?: boolean } = {}) {
  const calls: string[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: any }) => {
      const name = command.constructor.name;
      calls.push(`${name} ${command.input.executionArn ?? command.input.name}`);
      if (name === 'DescribeExecutionCommand') {
        if (!existing) throw new ExecutionDoesNotExist({ message: 'no such execution', $metadata: {} });
        return { status: existing.status };
      }
      if (name === 'StartExecutionCommand' && ((existing && existing.status !== 'RUNNING') || options.startedMeanwhile)) {
        throw new ExecutionAlreadyExists({ message: 'exists', $metadata: {} });
      }
      return {};
    },
  } as unknown as SFNClient;
  useStepFunctionsClient(client);
  return calls;
}

describe('ensureSettlementRunning', () => {
  process.env.STATE_MACHINE_ARN = ARN;
  resetConfig();
  afterEach(() => useStepFunctionsClient(undefined));

  it('starts an execution named by the trade when there is none', async () => {
    const calls = fakeStepFunctions(null);
    expect(await ensureSettlementRunning(trade)).toBe('started');
    expect(calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`, 'StartExecutionCommand trade-1']);
  });

  it('takes a start that lost the race to the request storing the trade as started', async () => {
    fakeStepFunctions(null, { startedMeanwhile: true });
    expect(await ensureSettlementRunning(trade)).toBe('started');
  });

  it('leaves a running execution alone (not reported as started) and reports a succeeded one as finished', async () => {
    const running = fakeStepFunctions({ status: 'RUNNING' });
    expect(await ensureSettlementRunning(trade)).toBe('running');
    expect(running).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`]);
    const succeeded = fakeStepFunctions({ status: 'SUCCEEDED' });
    expect(await ensureSettlementRunning(trade)).toBe('finished');
    expect(succeeded).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`]);
  });

  it.each(['FAILED', 'TIMED_OUT', 'ABORTED'])('redrives a %s execution by its execution ARN', async (status) => {
    const calls = fakeStepFunctions({ status });
    expect(await ensureSettlementRunning(trade)).toBe('redriven');
    expect(calls).toEqual([`DescribeExecutionCommand ${EXECUTION_ARN}`, `RedriveExecutionCommand ${EXECUTION_ARN}`]);
  });
});
