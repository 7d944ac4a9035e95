import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';

let template: Template;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  template = Template.fromStack(new ServiceStack(app, 'Test'));
});

describe('ServiceStack, event files', () => {
  it('runs the assembler shortly after midnight UTC and subscribes the SES ingester to the SNS topic', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(15 0 * * ? *)' });
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'lambda' });
  });

  it('expires crashed merge runs and running files of open days in the events bucket', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: 'tmp/', ExpirationInDays: 2, Status: 'Enabled' }),
          Match.objectLike({ Prefix: 'partial/', ExpirationInDays: 7, Status: 'Enabled' }),
        ]),
      },
    });
  });
});
