import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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
  resources: { settlementStateMachine: string; webhookDeliveries: string; mainTableStream: string };
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

/**
 * The deployed roles read in a child process (`node --import tsx deployed-roles.ts --print`): for a host whose module
 * loader cannot run the CDK's construct stack traces in-process (vitest's global setup), and asynchronous, so
 * the caller starts other work (DynamoDB Local) meanwhile.
 */
export function deployedRolesInChild(): Promise<DeployedRoles> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./deployed-roles.ts', import.meta.url)), '--print'],
      { cwd: fileURLToPath(new URL('../../..', import.meta.url)), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`deployed roles: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as DeployedRoles);
      },
    );
  });
}
