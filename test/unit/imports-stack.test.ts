import { App } from 'aws-cdk-lib';
import { expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { UPLOADS_PREFIX } from '../../shared/imports/objects.js';
import { PICKS_REQUESTS_PREFIX } from '../../shared/picks/objects.js';
import { foldedTemplate, type CfnResource } from '../helpers/cdk.js';

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
// Folded: the stack's nested stacks (docs/architecture.md, "Stack layout") in one view.
const template = foldedTemplate(new ServiceStack(app, 'Test'));

it('the stack sends ObjectCreated notifications of the imports bucket under the uploads prefix to the import worker, and under picks/requests/ to the newsletter-picks worker', () => {
  // The events bucket has its own (raw event objects to the change queue: test/infra/changes-stack.test.ts).
  const notifications = (Object.values(template.findResources('Custom::S3BucketNotifications')) as CfnResource[]).filter((n) => /^Imports/.test(n.Properties.BucketName.Ref));
  expect(notifications).toHaveLength(1);
  const { BucketName, NotificationConfiguration } = notifications[0].Properties;
  expect(BucketName.Ref).toMatch(/^Imports/);
  expect(NotificationConfiguration.LambdaFunctionConfigurations).toEqual([
    {
      Events: ['s3:ObjectCreated:*'],
      Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: UPLOADS_PREFIX }] } },
      LambdaFunctionArn: { 'Fn::GetAtt': [expect.stringMatching(/^importsWorker/), 'Arn'] },
    },
    {
      Events: ['s3:ObjectCreated:*'],
      Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: PICKS_REQUESTS_PREFIX }] } },
      LambdaFunctionArn: { 'Fn::GetAtt': [expect.stringMatching(/^newsletterPicksWorker/), 'Arn'] },
    },
  ]);
  // S3 refuses overlapping prefixes for the same event type.
  expect(PICKS_REQUESTS_PREFIX.startsWith(UPLOADS_PREFIX) || UPLOADS_PREFIX.startsWith(PICKS_REQUESTS_PREFIX)).toBe(false);
});

it('the import worker gets 2 async retries, then its event goes to the failure job, which may invoke nothing else', () => {
  // Scheduled jobs and the failure job have their own (onFailure to a queue); this one is the worker's.
  const configs = (Object.values(template.findResources('AWS::Lambda::EventInvokeConfig')) as CfnResource[]).filter((c) =>
    /^importsWorker(?!Failed)/.test(c.Properties.FunctionName.Ref),
  );
  expect(configs).toHaveLength(1);
  expect(configs[0].Properties).toMatchObject({
    FunctionName: { Ref: expect.stringMatching(/^importsWorker(?!Failed)/) as string },
    MaximumRetryAttempts: 2,
    DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^importsWorkerFailed/), 'Arn'] } } },
  });
  // The worker's role may invoke the failure function (the destination).
  const policies = Object.entries(template.findResources('AWS::IAM::Policy') as Record<string, CfnResource>).filter(([id]) =>
    /^importsWorker(?!Failed)/.test(id),
  );
  const statements = policies.flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
  expect(statements.some((st) => [st.Action].flat().includes('lambda:InvokeFunction') && JSON.stringify(st.Resource).includes('importsWorkerFailed'))).toBe(true);
});
