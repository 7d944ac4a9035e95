import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';

/**
 * cdk-nag's AwsSolutions and Serverless packs on every stack of the app (cdk-nag 3 attaches as a
 * validation plugin, not as an Aspect). A finding fails `cdk synth` unless it is acknowledged next
 * to its resource with `Validations.of(construct).acknowledge({ id, reason })`.
 */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}
