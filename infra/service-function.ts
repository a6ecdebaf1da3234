import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, Duration, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { buildSync } from 'esbuild';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Config } from '../lib/config.js';
import { ENTRY_FILE, esbuildOptionsFor } from './bundling.js';

/** The repository root: route handler paths and the lock file are relative to it. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The variables `lib/config.ts` reads, as the stack must set them. Derived from `Config` so a variable added
 * there fails type-checking here until the stack sets it. Left out: what Lambda provides (AWS_REGION) and
 * what only the local stack uses (LIST_CURSOR_KEY too: deployed, the key is read from its secret at run time).
 */
type LocalOnly = 'AWS_REGION' | 'DYNAMODB_ENDPOINT' | 'SECRETS_LOCAL_KEY' | 'LIST_CURSOR_KEY';
export type ServiceEnvironment = {
  [K in Exclude<
    keyof Config,
    LocalOnly | 'STATE_MACHINE_ARN' | 'WEBHOOK_QUEUE_URL' | 'LIST_CURSOR_SECRET_ARN'
  >]-?: string;
} & {
  /** Only on the functions that start settlement executions. */
  STATE_MACHINE_ARN?: string;
  /** Only on the functions that queue webhook deliveries (dispatcher, delivery worker, sweep). */
  WEBHOOK_QUEUE_URL?: string;
  /** Only on the functions that page lists by cursor (the routes marked `lists`). */
  LIST_CURSOR_SECRET_ARN?: string;
};

/**
 * API Gateway gives up on an integration after 29 s. The function stops a second before, so a request that runs
 * out of time still ends in the function (503 with Retry-After, its idempotency claim released) rather than in
 * API Gateway's 504 with the claim left in progress. The request's deadline is read from this value.
 */
export const API_FUNCTION_TIMEOUT = Duration.seconds(28);

export interface ServiceFunctionProps {
  /** Handler module relative to the repository root (a route's `handler`); it exports `handler`. */
  handler: string;
  environment: ServiceEnvironment;
  description?: string;
  timeout?: Duration;
  /** For functions invoked asynchronously (schedules): where an invocation goes once Lambda's retries are spent. */
  deadLetterQueue?: IQueue;
  /** Concurrency kept for this function alone (and its ceiling), so API traffic cannot take it. */
  reservedConcurrentExecutions?: number;
}

/**
 * Files some handlers read beside their bundle, made when the function is bundled: the API description
 * (written by the same generator as `npm run openapi`) and the Redoc script GET /docs loads. Commands run
 * from the project root; a source checkout reads the same things directly (see the handlers).
 */
const FILES_BESIDE_BUNDLE: Record<string, (outputDir: string) => string[]> = {
  'functions/docs/get-openapi.ts': (outputDir) => [`npx tsx infra/write-openapi.ts --out "${outputDir}/openapi.json"`],
  'functions/docs/get-docs-script.ts': (outputDir) => [
    `cp node_modules/redoc/bundles/redoc.standalone.js "${outputDir}/redoc.standalone.js"`,
  ],
};

/**
 * Every Lambda of the service, built one way. Runtime, architecture, bundling, tracing and log retention are
 * fixed here and nowhere else, so routes added to the table cannot drift from them.
 */
export class ServiceFunction extends Construct {
  readonly function: LambdaFunction;
  readonly logGroup: LogGroup;
  /** The handler module it runs: how the local runtime names the function whose role it acts under. */
  readonly handler: string;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.handler = props.handler;
    const entry = join(PROJECT_ROOT, props.handler);
    if (!existsSync(entry)) {
      // Name the route table's value, not only the absolute path esbuild would report.
      throw new Error(`${this.node.path}: handler ${props.handler} does not exist`);
    }

    // An explicit log group, so retention is part of the template rather than left to the default of forever.
    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });

    // A role of its own with no managed policy: it may write its own log group and nothing else until the stack
    // grants what the function's job needs (AWSLambdaBasicExecutionRole would allow every log group).
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: props.description,
    });
    this.logGroup.grantWrite(role);

    this.function = new LambdaFunction(this, 'Function', {
      code: functionCode(props.handler),
      handler: `${ENTRY_FILE.replace(/\.mjs$/, '')}.handler`,
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: props.timeout ?? API_FUNCTION_TIMEOUT,
      role,
      tracing: Tracing.ACTIVE,
      logGroup: this.logGroup,
      deadLetterQueue: props.deadLetterQueue,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      environment: { ...props.environment },
    });

    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-L1',
        reason: 'Node.js 22 is the runtime the design fixes and the bundles target (node22).',
      },
      {
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason: 'Active tracing: X-Ray PutTraceSegments/PutTelemetryRecords have no resource-level permissions.',
      },
    );
  }
}

/**
 * A function's asset: its bundle built with esbuild on this machine (`infra/bundling.ts`, the options the
 * benchmark measures), entry file and split-off chunks together, plus the files its handler reads beside them.
 * Built here rather than by NodejsFunction, which writes one output file and so cannot split code. The asset is
 * hashed from the output, so the repository is not fingerprinted, and synth fails outright when esbuild does:
 * there is no Docker fallback (the image named below is never pulled) that could hide a broken install.
 */
function functionCode(handler: string): Code {
  return Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('local-bundling-only'),
      // Every function's asset has the same source (the repository), and the CDK caches bundling by source and
      // options, which do not see into `local`: without the handler named here, every function got the first
      // function's bundle (test/infra/bundles.test.ts).
      environment: { SERVICE_FUNCTION_HANDLER: handler },
      local: {
        tryBundle(outputDir: string) {
          buildSync(esbuildOptionsFor(join(PROJECT_ROOT, handler), outputDir));
          for (const command of FILES_BESIDE_BUNDLE[handler]?.(outputDir) ?? [])
            execSync(command, { cwd: PROJECT_ROOT, stdio: 'inherit' });
          return true;
        },
      },
    },
  });
}
