import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import type { Policy } from 'aws-cdk-lib/aws-iam';
import { PROJECT_ROOT, ServiceFunction } from '../../service-function.js';
import { TradingSettlementStack, type TradingSettlementStackProps } from '../../stack.js';
import {
  type DeployedRoles,
  type FunctionRole,
  LOCAL_ACCOUNT,
  LOCAL_NAMES,
  type PolicyStatementJson,
} from './roles.js';

export type { DeployedRoles } from './roles.js';

/**
 * The deployed stack's roles. Constructing the stack takes a few seconds (no synthesis and no bundling: only
 * the construct tree is built and its tokens resolved), so a process does it once: `npm start` at start-up,
 * the tests in their global setup. `edit` changes the stack before it is read (a test removing a grant).
 */
export function deployedRoles(
  props: TradingSettlementStackProps = {},
  edit?: (stack: TradingSettlementStack) => void,
): DeployedRoles {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8'));
  // No bundling and no construct stack traces (the CDK captures one per construct, for `cdk synth` errors).
  const app = new App({
    context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], 'aws:cdk:disable-stack-trace': true },
  });
  const stack = new TradingSettlementStack(app, 'TradingSettlementService', props);
  edit?.(stack);
  return rolesOf(stack);
}

/** The roles of every ServiceFunction in `stack` (the nested ledger check's included). */
export function rolesOf(stack: TradingSettlementStack): DeployedRoles {
  const resolver = intrinsicResolver(stack);
  const functions: Record<string, FunctionRole> = {};
  for (const construct of stack.node.findAll()) {
    if (!(construct instanceof ServiceFunction)) continue;
    const role = construct.function.role!;
    const policy = role.node.tryFindChild('DefaultPolicy') as Policy | undefined;
    const document = policy ? Stack.of(policy).resolve(policy.document.toJSON()) : { Statement: [] };
    if (functions[construct.handler]) throw new Error(`two functions run ${construct.handler}`);
    functions[construct.handler] = {
      id: construct.node.id,
      statements: resolver(document.Statement) as PolicyStatementJson[],
    };
  }
  const deliveries = stack.node.findChild('WebhookDeliveries').node.defaultChild as CfnResource;
  return {
    functions,
    resources: {
      settlementStateMachine: resolver(stack.resolve(stack.settlementWorkflow.stateMachineArn)) as string,
      webhookDeliveries: resolver({ 'Fn::GetAtt': [stack.getLogicalId(deliveries), 'Arn'] }) as string,
      mainTableStream: resolver({
        'Fn::GetAtt': [stack.getLogicalId(stack.mainTable.node.defaultChild as CfnResource), 'StreamArn'],
      }) as string,
    },
  };
}

type Json = any; // CloudFormation fragments, walked by shape.

/** Resolves a resolved-token fragment of `stack` (or of its nested stacks) to plain strings. */
function intrinsicResolver(stack: TradingSettlementStack): (value: Json) => Json {
  const resources = new Map<string, CfnResource>();
  for (const construct of stack.node.findAll())
    if (construct instanceof CfnResource) resources.set(Stack.of(construct).getLogicalId(construct), construct);
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': LOCAL_NAMES.region,
    'AWS::AccountId': LOCAL_ACCOUNT,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stack.stackName,
  };
  const attribute = (logicalId: string, name: string): string => {
    const resource = resources.get(logicalId);
    if (!resource) throw new Error(`deployed roles: no resource ${logicalId} in the stack`);
    return localAttribute(stack, resource, name);
  };
  const resolve = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::')))
      return intrinsic(keys[0]!, value[keys[0]!]);
    return Object.fromEntries(keys.map((key) => [key, resolve(value[key])]));
  };
  const intrinsic = (name: string, args: Json): string | string[] => {
    switch (name) {
      case 'Ref':
        return pseudo[args] ?? attribute(args, 'Ref');
      case 'Fn::GetAtt':
        return attribute(args[0], args[1]);
      case 'Fn::Join':
        return (resolve(args[1]) as string[]).join(args[0]);
      case 'Fn::Sub': {
        const [template, variables] = typeof args === 'string' ? [args, {}] : args;
        const values = resolve(variables) as Record<string, string>;
        return (template as string).replace(/\$\{([^}]+)\}/g, (_match, key: string) => {
          if (key in values) return values[key]!;
          if (key in pseudo) return pseudo[key]!;
          const [id, att] = key.split('.');
          return attribute(id!, att ?? 'Ref');
        });
      }
      case 'Fn::Select':
        return (resolve(args[1]) as string[])[Number(args[0])]!;
      case 'Fn::Split':
        return (resolve(args[1]) as string).split(args[0]);
      default:
        throw new Error(`deployed roles: cannot resolve ${name} locally`);
    }
  };
  return resolve;
}

/**
 * The local stand-in of a resource's `Ref` or attribute. Tables are the local tables (placeholders); the
 * state machine keeps its deployed name; anything else gets an ARN named by its construct, enough for a
 * function's statements to name it and for a call to be matched against them.
 */
function localAttribute(stack: TradingSettlementStack, resource: CfnResource, name: string): string {
  const arn = (service: string, rest: string) => `arn:aws:${service}:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT}:${rest}`;
  const id = resource.node.scope!.node.id;
  switch (resource.cfnResourceType) {
    case 'AWS::DynamoDB::Table': {
      const table =
        resource === stack.mainTable.node.defaultChild
          ? LOCAL_NAMES.mainTable
          : resource === stack.ttlTable.node.defaultChild
            ? LOCAL_NAMES.ttlTable
            : id;
      if (name === 'Ref') return table;
      if (name === 'Arn') return arn('dynamodb', `table/${table}`);
      if (name === 'StreamArn') return arn('dynamodb', `table/${table}/stream/local`);
      break;
    }
    case 'AWS::SQS::Queue':
      if (name === 'Arn') return arn('sqs', id);
      if (name === 'QueueName') return id;
      if (name === 'Ref' || name === 'QueueUrl')
        return `https://sqs.${LOCAL_NAMES.region}.amazonaws.com/${LOCAL_ACCOUNT}/${id}`;
      break;
    case 'AWS::StepFunctions::StateMachine': {
      const machineName = stack.resolve((resource as unknown as { stateMachineName?: string }).stateMachineName) ?? id;
      if (name === 'Ref' || name === 'Arn') return arn('states', `stateMachine:${machineName}`);
      if (name === 'Name') return machineName;
      break;
    }
    case 'AWS::KMS::Key':
      return name === 'Ref' || name === 'KeyId' ? id : arn('kms', `key/${id}`);
    case 'AWS::SecretsManager::Secret':
      return arn('secretsmanager', `secret:${id}`);
    case 'AWS::Lambda::Function':
      return name === 'Ref' ? id : arn('lambda', `function:${id}`);
    case 'AWS::Logs::LogGroup':
      return name === 'Ref' ? id : arn('logs', `log-group:${id}:*`);
    case 'AWS::SNS::Topic':
      return arn('sns', id);
  }
  return arn('cloudformation', `local/${resource.cfnResourceType}/${id}/${name}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--print')
  process.stdout.write(JSON.stringify(deployedRoles()));
