import type { EnsureOutcome, SettlementExecutionInput } from '../domain/workflow-io.js';

/**
 * Where settlement executions run, behind one interface (as deliveries are behind the webhook queue): Step
 * Functions on AWS (`step-functions-workflow.ts`, when the stack sets STATE_MACHINE_ARN), the in-process
 * runner locally (`infra/local/workflow-runner.ts`), or none (`NO_SETTLEMENT_WORKFLOW`, a context that never
 * settles, such as the ops CLI's). Both operations are safe to repeat: an execution is named after its trade
 * and leg, and a name runs once.
 */
export interface SettlementWorkflow {
  /** Starts the execution of the input's leg; starting a running or finished one again changes nothing. */
  start(input: SettlementExecutionInput): Promise<void>;
  /** Makes sure the leg has a live execution: started when missing, run again (redriven) when it failed. */
  ensure(input: SettlementExecutionInput): Promise<EnsureOutcome>;
}

const missing = () =>
  new Error('no settlement workflow: STATE_MACHINE_ARN is not set and no local runner is registered');

/** The workflow of a context that never settles: being asked to is a configuration error. */
export const NO_SETTLEMENT_WORKFLOW: SettlementWorkflow = {
  start: async () => {
    throw missing();
  },
  ensure: async () => {
    throw missing();
  },
};
