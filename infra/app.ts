import { App } from 'aws-cdk-lib';
import { ServiceStack } from './service-stack.js';

const app = new App();
new ServiceStack(app, process.env.STACK_NAME ?? 'NewsletterService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  mailFrom: process.env.MAIL_FROM,
});
