import { Match, type Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_ALLOWANCES } from '../../infra/local/env.js';
import { ServiceStack } from '../../infra/service-stack.js';
import { eventNames } from '../../shared/events/types.js';
import { jobs } from '../../shared/jobs.js';
import { foldedTemplate, testApp, type CfnResource } from '../helpers/cdk.js';

let template: Template;
type Resource = CfnResource;

beforeAll(() => {
  template = foldedTemplate(new ServiceStack(testApp(), 'Test'));
});

const functionOf = (id: string) => Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Resource>).find(([logicalId]) => new RegExp(`^${id}[0-9A-F]{8}$`).test(logicalId))!;
const statementsOf = (id: string) => {
  const role = functionOf(id)[1].Properties.Role['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>)
    .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
};

describe('ServiceStack, subscriber changes out', () => {
  it('has a change bus, named and given in the outputs; only the fan-out job may put events on it', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    const [busId] = Object.keys(template.findResources('AWS::Events::EventBus'));
    template.hasOutput('ChangeBusName', { Value: { Ref: busId } });
    template.hasOutput('ChangeBusArn', { Value: { 'Fn::GetAtt': [busId, 'Arn'] } });
    expect(statementsOf('webhooksFanout')).toContainEqual(expect.objectContaining({ Action: 'events:PutEvents', Resource: { 'Fn::GetAtt': [busId, 'Arn'] } }));
    expect(functionOf('webhooksFanout')[1].Properties.Environment.Variables.EVENT_BUS_NAME).toEqual({ Ref: busId });
    const putters = Object.keys(template.findResources('AWS::Lambda::Function')).filter((id) => {
      const fnId = /^(.*)[0-9A-F]{8}$/.exec(id)?.[1];
      return fnId && !id.startsWith('BucketNotificationsHandler') && statementsOf(fnId).some((s) => [s.Action].flat().includes('events:PutEvents'));
    });
    expect(putters.map((id) => id.replace(/[0-9A-F]{8}$/, ''))).toEqual(['webhooksFanout']);
  });

  it('notifies a queue of every raw event object; the fan-out consumes it in batches with a dead-letter queue', () => {
    const notifications = Object.values(template.findResources('Custom::S3BucketNotifications') as Record<string, { Properties: { NotificationConfiguration: { QueueConfigurations?: unknown[] } } }>);
    expect(notifications.flatMap((n) => n.Properties.NotificationConfiguration.QueueConfigurations ?? [])).toEqual([
      { Events: ['s3:ObjectCreated:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'raw/' }] } }, QueueArn: { 'Fn::GetAtt': [expect.stringMatching(/^ChangeQueue/), 'Arn'] } },
    ]);
    const { batchSize, maxConcurrency, maxReceiveCount } = jobs.webhooksFanout.trigger.eventChanges;
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^webhooksFanoutDeadLetters'), 'Arn'] }, maxReceiveCount },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ChangeQueue'), 'Arn'] },
      BatchSize: batchSize,
      ScalingConfig: { MaximumConcurrency: maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FunctionName: { Ref: Match.stringLikeRegexp('^webhooksFanout') },
    });
  });

  it('sends the import worker’s (and its failure job’s) results to the change queue: import.finished', () => {
    for (const id of ['importsWorker', 'importsWorkerFailed']) {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: Match.stringLikeRegexp(`^${id}[0-9A-F]{8}$`) },
        DestinationConfig: Match.objectLike({ OnSuccess: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ChangeQueue'), 'Arn'] } } }),
      });
    }
  });

  it('queues webhook deliveries with a dead-letter queue that is alarmed and in the outputs; fan-out and delivery may send to both, nothing else', () => {
    const { batchSize, maxReceiveCount } = jobs.webhooksDeliver.trigger.webhookDeliveries;
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhookDeadLetters'), 'Arn'] }, maxReceiveCount },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhookQueue'), 'Arn'] },
      BatchSize: batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FunctionName: { Ref: Match.stringLikeRegexp('^webhooksDeliver') },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('WebhookDeadLetters.*Runbook: docs/operations.md#dead-letter-queue-not-empty'),
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhookDeadLetters'), 'QueueName'] } }],
      Threshold: 1,
    });
    template.hasOutput('WebhookDeadLetterQueueUrl', { Value: { Ref: Match.stringLikeRegexp('^WebhookDeadLetters') } });
    for (const id of ['webhooksFanout', 'webhooksDeliver']) {
      const sends = statementsOf(id).filter((s) => [s.Action].flat().includes('sqs:SendMessage'));
      expect(JSON.stringify(sends), id).toMatch(/"WebhookQueue[0-9A-F]{8}"/);
      expect(JSON.stringify(sends), id).toMatch(/"WebhookDeadLetters[0-9A-F]{8}"/);
      expect(functionOf(id)[1].Properties.Environment.Variables).toMatchObject({ WEBHOOK_QUEUE_URL: { Ref: expect.stringMatching(/^WebhookQueue/) as string }, WEBHOOK_DEAD_LETTER_QUEUE_URL: { Ref: expect.stringMatching(/^WebhookDeadLetters/) as string } });
    }
    expect(statementsOf('webhooksCreate').some((s) => JSON.stringify(s.Resource).includes('WebhookQueue'))).toBe(false);
  });

  it('has a Glue table over the raw records with partition projection on client, event, day and hour (no crawler)', () => {
    template.resourceCountIs('AWS::Glue::Crawler', 0);
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'newsletter_events_test' } });
    template.hasResourceProperties('AWS::Glue::Table', {
      DatabaseName: 'newsletter_events_test',
      TableInput: Match.objectLike({
        Name: 'events',
        TableType: 'EXTERNAL_TABLE',
        PartitionKeys: [Match.objectLike({ Name: 'client_id' }), Match.objectLike({ Name: 'event' }), Match.objectLike({ Name: 'day' }), Match.objectLike({ Name: 'hour', Type: 'int' })],
        Parameters: Match.objectLike({
          'projection.enabled': 'true',
          'projection.client_id.type': 'injected',
          'projection.event.type': 'enum',
          'projection.event.values': eventNames.join(','),
          'projection.day.type': 'date',
          'projection.day.format': 'yyyy-MM-dd',
          'projection.hour.type': 'integer',
          'projection.hour.digits': '2',
          'storage.location.template': { 'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^Events') }, '/raw/${client_id}/${event}/${day}/${hour}/']] },
        }),
        StorageDescriptor: Match.objectLike({ SerdeInfo: Match.objectLike({ SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' }) }),
      }),
    });
  });

  it('has an Athena workgroup that enforces encrypted results in a private, encrypted bucket of their own', () => {
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'Test-events',
      WorkGroupConfiguration: Match.objectLike({
        EnforceWorkGroupConfiguration: true,
        ResultConfiguration: {
          OutputLocation: { 'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^EventTablesResults') }, '/results/']] },
          EncryptionConfiguration: { EncryptionOption: 'SSE_S3' },
        },
      }),
    });
    const [, results] = Object.entries(template.findResources('AWS::S3::Bucket') as Record<string, Resource>).find(([id]) => id.startsWith('EventTablesResults'))!;
    expect(results.Properties).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
    template.hasOutput('AthenaWorkgroup', { Value: 'Test-events' });
  });

  it("the example queries of operations.md name only the table's columns and partitions", () => {
    const [table] = Object.values(template.findResources('AWS::Glue::Table') as Record<string, Resource>);
    const input = table.Properties.TableInput as { StorageDescriptor: { Columns: Array<{ Name: string }> }; PartitionKeys: Array<{ Name: string }> };
    const columns = new Set([...input.StorageDescriptor.Columns, ...input.PartitionKeys].map((c) => c.Name));
    const docs = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const sql = [...docs.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
    expect(sql.match(/^SELECT/gm)?.length).toBeGreaterThanOrEqual(3);
    // Words of the queries without comments and string literals; minus SQL, functions, the table and the aliases they define.
    const text = sql.replace(/--.*$/gm, '').replace(/'[^']*'/g, '');
    const sqlWords = new Set('select distinct from where and or between group by order as with left join on desc asc count sum date_trunc date if coalesce round case when then else end is null not in'.split(' '));
    const aliases = new Set([...text.matchAll(/\b(?:AS|FROM\s+\S+|JOIN\s+\S+)\s+([a-z_]+)\b/gi)].map((m) => m[1]));
    for (const m of text.matchAll(/\bWITH\s+([a-z_]+)|,\s*([a-z_]+)\s+AS\s*\(/gi)) aliases.add(m[1] ?? m[2]);
    const named = [...text.matchAll(/(?<![.\w])([a-z_][a-z0-9_]*)(?![\w.(])/gi)]
      .map((m) => m[1])
      .filter((w) => !sqlWords.has(w.toLowerCase()) && !aliases.has(w) && !/^\d/.test(w));
    expect(named.length).toBeGreaterThan(10);
    expect([...new Set(named)].filter((w) => !columns.has(w))).toEqual([]);
  });

  it('allows no loopback address in AWS: no function sets an *_ALLOW_LOOPBACK variable', () => {
    const functions = Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Resource>);
    expect(functions.length).toBeGreaterThan(40);
    for (const [id, fn] of functions) {
      const variables = Object.keys(fn.Properties.Environment?.Variables ?? {});
      expect(variables.filter((name) => (LOOPBACK_ALLOWANCES as readonly string[]).includes(name) || name.endsWith('_ALLOW_LOOPBACK')), id).toEqual([]);
    }
  });
});
