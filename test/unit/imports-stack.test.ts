import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { UPLOADS_PREFIX } from '../../shared/imports/objects.js';

it('the stack sends ObjectCreated notifications of the imports bucket under the uploads prefix to the import worker', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(new ServiceStack(app, 'Test'));
  const notifications = Object.values(template.findResources('Custom::S3BucketNotifications')) as Array<{ Properties: Record<string, any> }>;
  expect(notifications).toHaveLength(1);
  const { BucketName, NotificationConfiguration } = notifications[0].Properties;
  expect(BucketName.Ref).toMatch(/^Imports/);
  expect(NotificationConfiguration.LambdaFunctionConfigurations).toEqual([
    {
      Events: ['s3:ObjectCreated:*'],
      Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: UPLOADS_PREFIX }] } },
      LambdaFunctionArn: { 'Fn::GetAtt': [expect.stringMatching(/^importsWorker/), 'Arn'] },
    },
  ]);
});
