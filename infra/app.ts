import { App } from 'aws-cdk-lib';
import { addNagChecks } from './nag.js';
import { ServiceStack } from './service-stack.js';

const app = new App();
addNagChecks(app);
// Account and region come from the AWS environment of `cdk deploy` (CDK_DEFAULT_*); without one the
// template is environment-agnostic (AWS::Region / AWS::AccountId), never a silent us-east-1.
new ServiceStack(app, process.env.STACK_NAME ?? 'NewsletterService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  mailFrom: process.env.MAIL_FROM,
});
