import type { SFNClient } from '@aws-sdk/client-sfn';
import type { EnsureOutcome, SettlementExecutionInput } from '../domain/workflow-io.js';

/** Starts the settlement execution of a trade (the local runner's entry point). */
export type LocalSettlementStarter = (input: SettlementExecutionInput) => Promise<void>;

/** Starts the execution unless it runs; runs a failed one again (the local counterpart of a redrive). */
export type LocalSettlementEnsurer = (input: SettlementExecutionInput) => Promise<EnsureOutcome>;

/**
 * Where settlement executions run: Step Functions on AWS (STATE_MACHINE_ARN set by the stack), the
 * in-process runner locally, or nowhere (a context that never starts settlement, such as the ops CLI's).
 */
export type SettlementWorkflow =
  | { kind: 'step-functions'; client: SFNClient; stateMachineArn: string }
  | { kind: 'local'; start: LocalSettlementStarter; ensure: LocalSettlementEnsurer }
  | { kind: 'none' };
