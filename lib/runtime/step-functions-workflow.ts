import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  RedriveExecutionCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { executionNameOfInput, type EnsureOutcome, type SettlementExecutionInput } from '../domain/workflow-io.js';
import { awsRequestHandler, type AwsClientConfig } from './aws-clients.js';
import type { Deadlines } from './deadline.js';
import type { SettlementWorkflow } from './settlement-workflow.js';

/** The ARN of the execution named `name` (a trade id, or a trade id and leg). */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** The settlement workflow on AWS: executions of the state machine the stack names, one per trade and leg. */
export class StepFunctionsWorkflow implements SettlementWorkflow {
  constructor(
    readonly client: SFNClient,
    readonly stateMachineArn: string,
  ) {}

  /**
   * StartExecution of the leg's execution. Step Functions answers a repeat with the same input while the
   * execution is open with success, and refuses a name already used by a closed one (ExecutionAlreadyExists):
   * either way the trade is (or was) being settled, so both count as done.
   */
  async start(input: SettlementExecutionInput): Promise<void> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name: executionNameOfInput(input),
          input: JSON.stringify(input),
        }),
      );
    } catch (error) {
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
  }

  /**
   * Asks first rather than starting first: StartExecution succeeds for a running execution with the same
   * input, which would count every live trade as "started". A failed execution (task retries exhausted,
   * timeout, abort) is redriven from the failed state, which keeps its name and history.
   */
  async ensure(input: SettlementExecutionInput): Promise<EnsureOutcome> {
    const executionArn = executionArnOf(this.stateMachineArn, executionNameOfInput(input));
    let status: string | undefined;
    try {
      status = (await this.client.send(new DescribeExecutionCommand({ executionArn }))).status;
    } catch (error) {
      if (!(error instanceof ExecutionDoesNotExist)) throw error;
      // If the request that stored the trade starts it in the meantime, this start is a harmless repeat.
      await this.start(input);
      return 'started';
    }
    if (status === 'RUNNING' || status === 'PENDING_REDRIVE') return 'running';
    if (status === 'SUCCEEDED') return 'finished';
    await this.client.send(new RedriveExecutionCommand({ executionArn }));
    return 'redriven';
  }
}

/**
 * The settlement workflow on AWS, through a Step Functions client with the same timeouts and attempts as
 * DynamoDB's (each attempt bounded by the invocation's deadline), captured by the tracer when tracing is on. Loaded by `loadContext` only where the configuration
 * names the state machine, so other functions never load the client.
 */
export function stepFunctionsWorkflow(
  config: AwsClientConfig,
  stateMachineArn: string,
  tracer?: Tracer,
  deadlines?: Deadlines,
): StepFunctionsWorkflow {
  const client = new SFNClient({
    region: config.AWS_REGION,
    maxAttempts: config.AWS_MAX_ATTEMPTS,
    requestHandler: awsRequestHandler(config, deadlines),
  });
  return new StepFunctionsWorkflow(tracer ? tracer.captureAWSv3Client(client) : client, stateMachineArn);
}
