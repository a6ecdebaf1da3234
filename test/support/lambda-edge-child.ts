/**
 * A process that invokes one Lambda handler (GET /time) through its `onLambda` edge, as the Lambda runtime
 * would, and prints what it answered and whether the X-Ray SDK was loaded. Env: the service configuration
 * (TRACING among it).
 */
import { createRequire } from 'node:module';
import type { Context } from 'aws-lambda';
import { handler } from '../../functions/system/get-time.js';
import { apiGatewayEvent } from '../../lib/http/apigw-event.js';

const lambdaContext = {
  functionName: 'get-time',
  awsRequestId: 'local',
  getRemainingTimeInMillis: () => 29_000,
} as unknown as Context;
const response = await handler(apiGatewayEvent({ method: 'GET', path: '/time', resource: '/time' }), lambdaContext);
// ESM imports of CommonJS packages go through the CommonJS loader, so its cache lists them.
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(
  JSON.stringify({ status: response.statusCode, xray: loaded.some((path) => path.includes('aws-xray-sdk-core')) }),
);
