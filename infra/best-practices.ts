import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

/**
 * AWS Solutions best practices (cdk-nag), checked on every synthesis of the app: an unacknowledged finding,
 * error or warning, fails it. Exceptions are acknowledged beside the construct they concern, each with its
 * reason, so they are read where the resource is written.
 */
export function addBestPracticeChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}
