import { Aws, type CfnElement, CfnParameter, Fn, NestedStack, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';

export interface ApiFirewallStackProps {
  api: RestApi;
  /** The stage's name, as a literal: the association names the stage by it (see below). */
  stageName: string;
  /** The most requests one API key may send in 60 s before WAF answers it 429. */
  requestsPerKeyPerMinute: number;
}

/** What WAF's 429 tells the client to wait: its window. */
const RETRY_AFTER_SECONDS = '60';

/**
 * The API stage's WAF web ACL: one rate-based rule keyed on the X-SVC-API-KEY header. A
 * key sending more than `requestsPerKeyPerMinute` in 60 s is answered 429 before API Gateway or any function
 * spends anything on it, so it cannot use up the stage throttle the other platforms share. WAF counts over 1 to
 * 10 minute windows with one limit per rule, so the per-platform limits ops set are enforced in the signature
 * check instead (`lib/domain/rate-limits.ts`); this is the coarse guard above them. Requests without the header
 * are not counted here (the functions refuse them with 403).
 *
 * A nested stack, so the service's stack keeps its headroom under CloudFormation's 500 resources: this adds
 * one resource there instead of two.
 */
export class ApiFirewallStack extends NestedStack {
  readonly webAcl: CfnWebACL;
  readonly association: CfnWebACLAssociation;

  constructor(scope: Construct, id: string, props: ApiFirewallStackProps) {
    // The API's id comes in as a parameter named after the API's logical id in the service stack: cdk-nag's APIG3
    // check recognises the stage of an association by that id followed by the stage's name (CDK's own reference
    // parameter is named after the construct path instead, which the check does not follow).
    const parent = Stack.of(props.api);
    const apiIdParameter = `${parent.resolve(parent.getLogicalId(props.api.node.defaultChild as CfnElement)) as string}RestApiId`;
    super(scope, id, {
      description: 'Per API key request rate guard of the API stage',
      parameters: { [apiIdParameter]: props.api.restApiId },
    });
    const restApiId = new CfnParameter(this, apiIdParameter, {
      type: 'String',
      description: 'The id of the REST API whose stage this guards.',
    });
    const perMinute = props.requestsPerKeyPerMinute;
    this.webAcl = new CfnWebACL(this, 'ApiFirewall', {
      scope: 'REGIONAL',
      description: 'Per API key request rate guard for the API stage.',
      defaultAction: { allow: {} },
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: 'ApiFirewall', sampledRequestsEnabled: true },
      customResponseBodies: {
        RateLimited: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({ errors: [`rate limit exceeded: retry after ${RETRY_AFTER_SECONDS} s`] }),
        },
      },
      rules: [
        {
          name: 'ApiKeyRate',
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: perMinute,
              evaluationWindowSec: 60,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: 'x-svc-api-key', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
            },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'RateLimited',
                // The fields the functions answer with (draft-ietf-httpapi-ratelimit-headers-09).
                responseHeaders: [
                  { name: 'Retry-After', value: RETRY_AFTER_SECONDS },
                  { name: 'RateLimit-Policy', value: `"waf";q=${perMinute};w=60` },
                  { name: 'RateLimit', value: `"waf";r=0;t=${RETRY_AFTER_SECONDS}` },
                ],
              },
            },
          },
          visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: 'ApiKeyRate', sampledRequestsEnabled: true },
        },
      ],
    });
    // The stage by the API's id and the literal stage name (its own ARN would come in as a parameter the check does
    // not follow either). The nested stack depends on the stage (below), so the association is made once it exists.
    const stageArn = Fn.join('', [
      'arn:',
      Aws.PARTITION,
      ':apigateway:',
      Aws.REGION,
      '::/restapis/',
      restApiId.valueAsString,
      '/stages/',
      props.stageName,
    ]);
    this.association = new CfnWebACLAssociation(this, 'ApiFirewallAssociation', {
      resourceArn: stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    this.node.addDependency(props.api.deploymentStage);
  }
}
