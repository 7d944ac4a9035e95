import { App } from 'aws-cdk-lib';
import { addNagChecks } from './nag.js';
import { ServiceStack } from './service-stack.js';

const app = new App();
addNagChecks(app);
// Where the stack goes (docs/operations.md, "Deploy"): `-c region=… -c account=…`, else AWS_REGION or
// AWS_DEFAULT_REGION and the account of the credentials. Not CDK_DEFAULT_REGION: the CLI sets it to
// us-east-1 when nothing is configured. Without a region the template is environment-agnostic
// (AWS::Region, AWS::AccountId) and deploys wherever `cdk deploy` points.
const context = (key: string) => app.node.tryGetContext(key) as string | undefined;
new ServiceStack(app, process.env.STACK_NAME ?? 'NewsletterService', {
  env: {
    account: context('account') ?? process.env.CDK_DEFAULT_ACCOUNT,
    region: context('region') ?? (process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || undefined),
  },
  mailFrom: process.env.MAIL_FROM,
  // `-c dataKey=customer-managed`: the table and buckets under a customer-managed KMS key (docs/capacity.md, "Data at rest").
  customerManagedKey: context('dataKey') === 'customer-managed',
});
