import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { jobs } from '../../shared/jobs.js';
import { foldedTemplate, type CfnResource } from '../helpers/cdk.js';

let template: Template;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  template = foldedTemplate(new ServiceStack(app, 'Test'));
});

describe('ServiceStack, event files', () => {
  it('lets SES of this account publish to the SES events topic', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'ses.amazonaws.com' }, Action: 'sns:Publish', Condition: { StringEquals: { 'AWS:SourceAccount': { Ref: 'AWS::AccountId' } } } }),
        ]),
      },
    });
  });

  it('runs the assembler shortly after midnight UTC', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(15 0 * * ? *)' });
  });

  it('feeds the SES ingester from the SNS topic through an SQS queue in large batches, with partial batch responses and a dead-letter queue', () => {
    const { batchSize, maxBatchingWindowSeconds, maxReceiveCount } = jobs.sesEvents.trigger.sesEventsQueue;
    expect(batchSize).toBeGreaterThanOrEqual(1000);
    expect(maxBatchingWindowSeconds).toBeGreaterThanOrEqual(60);
    // The SES events topic and the alarm topic.
    template.resourceCountIs('AWS::SNS::Topic', 2);
    expect(Object.values(template.findResources('AWS::SNS::Subscription') as Record<string, CfnResource>).filter((s) => s.Properties.Protocol === 'sqs')).toHaveLength(1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      Endpoint: { 'Fn::GetAtt': [Match.stringLikeRegexp('^sesEventsQueue'), 'Arn'] },
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^sesEventsUndelivered'), 'Arn'] } },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^sesEventsDeadLetters'), 'Arn'] }, maxReceiveCount },
      VisibilityTimeout: 6 * jobs.sesEvents.timeoutSeconds + maxBatchingWindowSeconds,
    });
    template.hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 14 * 24 * 3600 });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^sesEventsQueue'), 'Arn'] },
      BatchSize: batchSize,
      MaximumBatchingWindowInSeconds: maxBatchingWindowSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FunctionName: { Ref: Match.stringLikeRegexp('^sesEvents') },
    });
  });

  it('expires crashed merge runs, running files of open days and the hours of recent days in the events bucket, and their replaced versions after a day', () => {
    const derived = ['partial/', 'partial-raw/', 'hours/', 'hours-raw/'].map((Prefix) =>
      Match.objectLike({ Prefix, ExpirationInDays: 7, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Status: 'Enabled' }),
    );
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'tmp/', ExpirationInDays: 2, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Status: 'Enabled' }), ...derived]),
      },
    });
  });

  it('runs the hour assembler a few minutes past every hour, with the time and memory of the daily one', () => {
    expect(jobs.eventsAssembleHours.trigger.schedule).toBe('cron(5 * * * ? *)');
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(5 * * * ? *)' });
    const fns = Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, CfnResource>).filter(([id]) => id.startsWith('eventsAssembleHours'));
    expect(fns).toHaveLength(1);
    expect(fns[0][1].Properties).toMatchObject({ Timeout: 900, MemorySize: 1024, Environment: { Variables: { EVENTS_BUCKET: expect.anything() as unknown } } });
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(5 * * * ? *)',
      Targets: Match.arrayWith([Match.objectLike({ Arn: { 'Fn::GetAtt': [fns[0][0], 'Arn'] } })]),
    });
  });
});
