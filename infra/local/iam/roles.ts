/**
 * Every function's role as the stack deploys it, read from the same CDK constructs `cdk deploy` synthesizes
 * (no second list of permissions): each ServiceFunction's role policy, with CloudFormation's intrinsics
 * (`Fn::GetAtt` of a table's Arn, `Ref`, `Fn::Join`, `Fn::Sub`, pseudo parameters) resolved to the ARNs of
 * the local stand-ins. Table names and the region differ between `npm start`, a test worker and the
 * simulation, so they stay placeholders (`LOCAL_NAMES`) until `LocalIam` fills them in.
 *
 * JSON through and through: the tests' global setup computes it once per run and hands it to every worker.
 */
export interface DeployedRoles {
  /** By handler module (`functions/transfers/create-transfer.ts`): the local runtime knows which it runs. */
  functions: Record<string, FunctionRole>;
  /** ARNs of the local stand-ins for the AWS services a function calls outside DynamoDB. */
  resources: { settlementStateMachine: string; webhookDeliveries: string };
}

export interface FunctionRole {
  /** The construct's id in the stack (`PostTransfers`, `SettlementAttemptTask`): what a refusal names. */
  id: string;
  /** Its IAM policy statements, resolved. */
  statements: PolicyStatementJson[];
}

export type PolicyStatementJson = {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
};

/** The placeholders of what each local run names for itself. */
export const LOCAL_NAMES = { region: '{{Region}}', mainTable: '{{MainTable}}', ttlTable: '{{TtlTable}}' } as const;

/** The account every local ARN is in (the SDK's and LocalStack's stand-in account). */
export const LOCAL_ACCOUNT = '000000000000';
