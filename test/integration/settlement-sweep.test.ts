import { ExecutionAlreadyExists, type SFNClient } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../lib/config.js';
import { ensureSettlementRunning, useStepFunctionsClient } from '../../lib/settlement/start-settlement.js';

/**
 * The AWS sweep's decisions, against a stand-in for the Step Functions API (AWS's service, not ours; the
 * local runner covers the workflow itself).
 */
const ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:Settlement';
const trade = { trade_id: 'trade-1', accepted_timestamp: 1_790_000_000_000, settlement_timestamp: null };

function fakeStepFunctions(existing: { status: string } | null) {
  const calls: string[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: any }) => {
      const name = command.constructor.name;
      calls.push(`${name} ${command.input.executionArn ?? command.input.name}`);
      if (name === 'StartExecutionCommand' && existing) throw new ExecutionAlreadyExists({ message: 'exists', $metadata: {} });
      if (name === 'DescribeExecutionCommand') return { status: existing!.status };
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
    expect(calls).toEqual(['StartExecutionCommand trade-1']);
  });

  it('leaves a running execution alone and reports a succeeded one as finished', async () => {
    fakeStepFunctions({ status: 'RUNNING' });
    expect(await ensureSettlementRunning(trade)).toBe('running');
    const calls = fakeStepFunctions({ status: 'SUCCEEDED' });
    expect(await ensureSettlementRunning(trade)).toBe('finished');
    expect(calls).not.toContainEqual(expect.stringContaining('Redrive'));
  });

  it.each(['FAILED', 'TIMED_OUT', 'ABORTED'])('redrives a %s execution by its execution ARN', async (status) => {
    const calls = fakeStepFunctions({ status });
    expect(await ensureSettlementRunning(trade)).toBe('redriven');
    expect(calls).toEqual([
      'StartExecutionCommand trade-1',
      'DescribeExecutionCommand arn:aws:states:us-east-1:123456789012:execution:Settlement:trade-1',
      'RedriveExecutionCommand arn:aws:states:us-east-1:123456789012:execution:Settlement:trade-1',
    ]);
  });
});
