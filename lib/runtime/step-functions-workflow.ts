import { SFNClient } from '@aws-sdk/client-sfn';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { awsRequestHandler, type AwsClientConfig } from './aws-clients.js';
import type { SettlementWorkflow } from './settlement-workflow.js';

/**
 * The settlement workflow on AWS: the state machine the stack names, started through a Step Functions client
 * with the same timeouts and attempts as DynamoDB's, captured by the tracer when tracing is on. Loaded by
 * `loadContext` only where the configuration names the state machine, so other functions never load the client.
 */
export function stepFunctionsWorkflow(
  config: AwsClientConfig,
  stateMachineArn: string,
  tracer?: Tracer,
): SettlementWorkflow {
  const client = new SFNClient({
    region: config.AWS_REGION,
    maxAttempts: config.AWS_MAX_ATTEMPTS,
    requestHandler: awsRequestHandler(config),
  });
  return { kind: 'step-functions', client: tracer ? tracer.captureAWSv3Client(client) : client, stateMachineArn };
}
