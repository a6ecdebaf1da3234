import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { config } from '../config.js';
import { firstAttemptAtMs } from '../domain/settlement.js';
import type { Trade } from '../store/trades.js';
import { settlementExecutionInput, type SettlementExecutionInput } from '../../infra/settlement-workflow.js';

/**
 * Starts the settlement workflow of a trade: an execution named by `trade_id`. On AWS that is Step Functions
 * (STATE_MACHINE_ARN, set by the stack); locally the in-process runner registers itself here. Starting the
 * same trade twice is harmless in both: Step Functions refuses a second execution of a name (we ignore the
 * refusal), and the local runner keeps one execution per trade.
 */
export type LocalSettlementStarter = (input: SettlementExecutionInput) => Promise<void>;

let localStarter: LocalSettlementStarter | undefined;
let sfn: SFNClient | undefined;

/** The local runner (or a test) installs its starter; `undefined` removes it. */
export function useLocalSettlementStarter(starter: LocalSettlementStarter | undefined): void {
  localStarter = starter;
}

export function settlementInputFor(trade: Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>): SettlementExecutionInput {
  return settlementExecutionInput(trade.trade_id, firstAttemptAtMs(trade), config().SETTLEMENT_SESSION_SECONDS);
}

export async function startSettlement(trade: Pick<Trade, 'trade_id' | 'accepted_timestamp' | 'settlement_timestamp'>): Promise<void> {
  const input = settlementInputFor(trade);
  const { STATE_MACHINE_ARN, AWS_REGION } = config();
  if (STATE_MACHINE_ARN) {
    sfn ??= new SFNClient({ region: AWS_REGION });
    try {
      await sfn.send(new StartExecutionCommand({ stateMachineArn: STATE_MACHINE_ARN, name: input.trade_id, input: JSON.stringify(input) }));
    } catch (error) {
      // A running or finished execution of this trade already exists: the trade is (or was) being settled.
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
    return;
  }
  if (localStarter) return localStarter(input);
  throw new Error('no settlement workflow: STATE_MACHINE_ARN is not set and no local runner is registered');
}
