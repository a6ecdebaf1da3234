import { App } from 'aws-cdk-lib';
import { addBestPracticeChecks } from './best-practices.js';
import { TradingSettlementStack } from './stack.js';

const app = new App();
addBestPracticeChecks(app);

// Account and region come from the CLI's credentials when there are any; without them the stack is
// environment-agnostic, which is what lets `npm run synth` work offline.
new TradingSettlementStack(app, 'TradingSettlementService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'Trading, rewards and settlement service: API Gateway, Lambda, DynamoDB, Step Functions.',
});
