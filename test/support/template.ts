import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnResource, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { inject } from 'vitest';
import { addBestPracticeChecks } from '../../infra/best-practices.js';
import { PROJECT_ROOT } from '../../infra/service-function.js';
import { TradingSettlementStack, type TradingSettlementStackProps } from '../../infra/stack.js';

export type Json = any; // CloudFormation fragments: shapes are asserted, not typed.

/**
 * Synthesizes with the feature flags `cdk synth` uses (cdk.json), so the template under test is the deployed
 * one. Bundling is skipped through the CDK's own switch: esbuild would cost about half a second per function
 * and the template is the same either way, apart from the asset hash. CloudFormation validation stays on (CI
 * runs no `cdk synth`, so this is where an invalid template fails): about 3 s once per process, then cheap.
 * A validation finding fails `Template.fromStack` with the report.
 */
export function synth(
  props: TradingSettlementStackProps = {},
  options: { context?: Record<string, unknown>; bestPractices?: boolean } = {},
) {
  // The stack as `cdk synth` builds it, asked for by four describe blocks in two files: built once per worker
  // (the files of a worker share its modules), as nothing asserting on it changes it.
  if (Object.keys(props).length === 0 && Object.keys(options).length === 0) return (defaultStack ??= synthesize());
  return synthesize(props, options);
}

let defaultStack: ReturnType<typeof synthesize> | undefined;

function synthesize(
  props: TradingSettlementStackProps = {},
  options: { context?: Record<string, unknown>; bestPractices?: boolean } = {},
) {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8'));
  // In the run's scratch directory, which the global set-up removes when the run ends.
  const outdir = mkdtempSync(join(inject('scratchDir'), 'cloud-assembly-'));
  const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...options.context } });
  // Off by default: the checks add seconds per synthesis, and one test runs them as `npm run synth` does.
  if (options.bestPractices) addBestPracticeChecks(app);
  const stack = new TradingSettlementStack(app, 'TradingSettlementService', props);
  const template = Template.fromStack(stack);
  const resources: Record<string, Json> = template.toJSON().Resources;
  const idOf = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnResource);
  return { app, stack, template, resources, idOf };
}

export const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

export function ofType(resources: Record<string, Json>, type: string): [string, Json][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

/** The statements of every IAM policy attached to a role, flattened. */
export function statementsOf(resources: Record<string, Json>, roleId: string): Json[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => policy.Properties.Roles.some((role: Json) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement);
}

export const actionsOf = (statement: Json): string[] => [statement.Action].flat();
export const resourcesOf = (statement: Json): Json[] => [statement.Resource].flat();

/**
 * A nested stack's resources as the parent deploys them: every `{ Ref: parameter }` replaced by what the
 * parent passes for it (`{ Ref: <the parent's logical id> }` and the like), so assertions can name the
 * parent's resources as they do in the parent's own template.
 */
export function nestedResources(
  parent: Stack,
  parentResources: Record<string, Json>,
  nested: NestedStack,
): Record<string, Json> {
  const passed: Record<string, Json> =
    parentResources[parent.getLogicalId(nested.nestedStackResource!)].Properties.Parameters ?? {};
  const substitute = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(substitute);
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'Ref' && value.Ref in passed) return passed[value.Ref];
    return Object.fromEntries(keys.map((key) => [key, substitute(value[key])]));
  };
  return substitute(Template.fromStack(nested).toJSON().Resources);
}

/** Every template of the stack (its own and each nested stack's), by a name for messages. */
export function templatesOf(stack: Stack): [string, Json][] {
  const nested = stack.node.findAll().filter((construct) => NestedStack.isNestedStack(construct)) as NestedStack[];
  return [stack, ...nested].map((each) => [each.node.path, Template.fromStack(each).toJSON()]);
}
