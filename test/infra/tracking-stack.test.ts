import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { reservedConcurrency, routeThrottles } from '../../infra/protection.js';
import { jobs } from '../../shared/jobs.js';
import { recoRoutes } from '../../shared/routes/recos.js';
import { foldedTemplate, type CfnResource } from '../helpers/cdk.js';

let template: Template;
type Resource = CfnResource;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  template = foldedTemplate(new ServiceStack(app, 'Test'));
});

const statementsOf = (fnPrefix: string) => {
  const functions = template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const [, fn] = Object.entries(functions).find(([id]) => new RegExp(`^${fnPrefix}[0-9A-F]{8}$`).test(id))!;
  const role = fn.Properties.Role['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>)
    .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
};

describe('ServiceStack, page views off the request path', () => {
  const { batchSize, maxBatchingWindowSeconds, maxConcurrency, maxReceiveCount } = jobs.trackingViews.trigger.trackingQueue;

  it('queues page views in an encrypted queue with a dead-letter queue after maxReceiveCount, kept 4 days', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 4 * 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^trackingViewsDeadLetters'), 'Arn'] }, maxReceiveCount },
      VisibilityTimeout: 6 * jobs.trackingViews.timeoutSeconds + maxBatchingWindowSeconds,
    });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
  });

  it('feeds the consumer in batches: batch size, batching window, maximum concurrency and partial batch responses', () => {
    expect(batchSize).toBeGreaterThanOrEqual(100);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^TrackingQueue'), 'Arn'] },
      BatchSize: batchSize,
      MaximumBatchingWindowInSeconds: maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FunctionName: { Ref: Match.stringLikeRegexp('^trackingViews') },
    });
    // Reserved concurrency covers the batches in flight, so public traffic cannot starve the consumer.
    expect(reservedConcurrency.trackingViews).toBeGreaterThanOrEqual(maxConcurrency);
  });

  it('lets the track function send messages to that queue and nothing else of SQS; it reads the table only', () => {
    const sqs = statementsOf('trackPost').filter((s) => [s.Action].flat().some((a) => a.startsWith('sqs:')));
    expect(sqs).toEqual([expect.objectContaining({ Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [expect.stringMatching(/^TrackingQueue/), 'Arn'] } })]);
    const actions = statementsOf('trackPost').flatMap((s) => [s.Action].flat());
    expect(actions.some((a) => a === 'dynamodb:PutItem' || a === 'dynamodb:UpdateItem')).toBe(false);
    expect(recoRoutes.trackPost.access).toEqual({ table: 'R', trackingQueue: true });
    const env = (Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Resource>).find(([id]) => id.startsWith('trackPost'))![1]).Properties.Environment.Variables;
    expect(env.TRACKING_QUEUE_URL).toEqual({ Ref: expect.stringMatching(/^TrackingQueue/) as string });
  });

  it('alarms when a page view is dead-lettered, when the oldest waits more than 5 minutes, and when counted views lose their reader or co-visit writes', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm') as Record<string, Resource>);
    const on = (text: string) => alarms.find((a) => JSON.stringify(a.Properties).includes(text));
    expect(on('trackingViewsDeadLetters')?.Properties).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    expect(on('ApproximateAgeOfOldestMessage')?.Properties).toMatchObject({ Threshold: 300, Dimensions: [{ Value: { 'Fn::GetAtt': [expect.stringMatching(/^TrackingQueue/), 'QueueName'] } }] });
    expect(on('PageViewEffectsLost')?.Properties.AlarmDescription).toContain('docs/operations.md#page-view-effects-lost');
    expect(on('ApproximateAgeOfOldestMessage')?.Properties.AlarmDescription).toContain('docs/operations.md#tracking-queue-behind');
  });

  it('lets the public tracking route take a viral article (the request is two reads and one message)', () => {
    expect(routeThrottles.trackPost.rateLimit).toBeGreaterThanOrEqual(1000);
  });
});
