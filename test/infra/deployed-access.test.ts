/**
 * Local equals deployed (test/helpers/deployed-access.ts): what the handlers
 * do through the local gateway and job runner is allowed by the synthesized
 * template, and deliberate mistakes (a call without its grant, a read the
 * stack does not set, a trigger that differs from the job table) are found.
 * The whole suite's recordings are checked the same way when the run ends
 * (test/helpers/global-setup.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { invokeJob, scheduledEvent } from '../../infra/local/jobs.js';
import { callsOf, recordedHere, type Recording } from '../../infra/local/recording.js';
import { jobList, type JobTrigger } from '../../shared/jobs.js';
import { checkRecordings, checkTriggers, functionView, synthesizedTemplate, type TemplateJson } from '../helpers/deployed-access.js';
import { newClient, request, useService } from '../helpers/service.js';

const service = useService();
let template: TemplateJson;
beforeAll(() => {
  template = synthesizedTemplate({ folded: true });
});

/** The role policy of a function in a template. */
const policyOf = (t: TemplateJson, fn: string) => {
  const role = t.Resources[functionView(t, fn)!.logicalId].Properties!.Role as { 'Fn::GetAtt': string[] };
  return Object.values(t.Resources).find((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties!.Roles as Array<{ Ref: string }>).some((x) => x.Ref === role['Fn::GetAtt'][0]))!;
};

/** The properties of the event source mapping that invokes a job's function. */
const mappingOf = (t: TemplateJson, job: string) => {
  const fn = functionView(t, job)!.logicalId;
  return Object.values(t.Resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && (r.Properties!.FunctionName as { Ref: string }).Ref === fn)!.Properties!;
};

describe('what runs locally is what the stack allows', () => {
  it('allows every SDK call and variable read of real requests and a job run', async () => {
    const client = await newClient(service);
    const list = `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
    expect((await request(list, { method: 'POST', token: client.token, body: [{ email: 'a@x.co' }], headers: { 'idempotency-key': 'check-1' } })).status).toBe(200);
    expect((await request(`${list}/count`, { token: client.token })).status).toBe(200);
    await invokeJob(jobList.find((j) => j.id === 'importsSweeper')!, scheduledEvent());
    const recorded = recordedHere();
    const of = (fn: string) => recorded.filter((r) => r.fn === fn);
    // The batch POST: the idempotency record, the subscriber's conditional write (a PartiQL INSERT); the table's name from TABLE_NAME.
    expect(of('subscribersPost')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'call', action: 'dynamodb:PutItem', resource: expect.objectContaining({ env: ['TABLE_NAME'] }) as object }),
        expect.objectContaining({ kind: 'call', action: 'dynamodb:PartiQLInsert', resource: expect.objectContaining({ env: ['TABLE_NAME'] }) as object }),
        expect.objectContaining({ kind: 'env', name: 'TABLE_NAME', required: true }),
      ]),
    );
    expect(of('subscribersCount').some((r) => r.kind === 'call' && r.action.startsWith('dynamodb:'))).toBe(true);
    expect(of('importsSweeper').some((r) => r.kind === 'call')).toBe(true);
    expect(checkRecordings(recorded, template)).toEqual([]);
  });

  it('finds a call the role does not allow: a handler that gains a write, a grant taken away', () => {
    const gained: Recording[] = [{ fn: 'subscribersCount', kind: 'call', command: 'DynamoDBDocumentClient.PutCommand', action: 'dynamodb:PutItem', resource: { name: 'newsletter-service', env: ['TABLE_NAME'] } }];
    const table = functionView(template, 'subscribersCount')!.environment.TABLE_NAME as { Ref: string };
    expect(checkRecordings(gained, template)).toEqual([`subscribersCount: dynamodb:PutItem on <${table.Ref}.Arn> (DynamoDBDocumentClient.PutCommand) is not allowed by its role`]);

    const withoutPut = structuredClone(template);
    for (const statement of (policyOf(withoutPut, 'subscribersPost').Properties!.PolicyDocument as { Statement: Array<{ Action: string | string[] }> }).Statement) {
      statement.Action = [statement.Action].flat().filter((a) => a !== 'dynamodb:PutItem');
    }
    const put: Recording = { fn: 'subscribersPost', kind: 'call', command: 'DynamoDBClient.PutItemCommand', action: 'dynamodb:PutItem', resource: { name: 'newsletter-service', env: ['TABLE_NAME'] } };
    expect(checkRecordings([put], template)).toEqual([]);
    expect(checkRecordings([put], withoutPut)).toEqual([`subscribersPost: dynamodb:PutItem on <${table.Ref}.Arn> (DynamoDBClient.PutItemCommand) is not allowed by its role`]);
  });

  it('checks the resource too: an index, an object of another bucket, a resource no variable names', () => {
    const query = (fn: string, index: string): Recording => ({ fn, kind: 'call', command: 'DynamoDBDocumentClient.QueryCommand', action: 'dynamodb:Query', resource: { name: 't', env: ['TABLE_NAME'], index } });
    expect(checkRecordings([query('subscribersList', 'gsi1')], template)).toEqual([]);
    const events: Recording = { fn: 'subscribersPost', kind: 'call', command: 'S3Client.GetObjectCommand', action: 's3:GetObject', resource: { name: 'imports', env: ['IMPORTS_BUCKET'], key: 'uploads/x.csv' } };
    expect(checkRecordings([events], template)[0]).toMatch(/^subscribersPost: s3:GetObject on <Imports[0-9A-F]{8}\.Arn>\/uploads\/x\.csv .* is not allowed by its role$/);
    const unnamed: Recording = { fn: 'filesGet', kind: 'call', command: 'S3Client.PutObjectCommand', action: 's3:PutObject', resource: { name: 'hard-coded', env: [], key: 'k' } };
    expect(checkRecordings([unnamed], template)).toEqual(["filesGet: s3:PutObject on hard-coded: named by no environment variable, which the function's Environment does not set"]);
  });

  it('finds a required variable the stack does not set; Lambda\'s own and optional ones pass', () => {
    const reads: Recording[] = [
      { fn: 'subscribersCount', kind: 'env', name: 'NEW_SETTING', required: true },
      { fn: 'subscribersCount', kind: 'env', name: 'AWS_REGION', required: true },
      { fn: 'subscribersCount', kind: 'env', name: 'TOKEN_TTL_SECONDS', required: false },
      { fn: 'subscribersCount', kind: 'env', name: 'TABLE_NAME', required: true },
    ];
    expect(checkRecordings(reads, template)).toEqual(['subscribersCount: reads NEW_SETTING, which its Environment does not set']);
    const withoutTable = structuredClone(template);
    delete functionView(withoutTable, 'subscribersCount')!.environment.TABLE_NAME;
    expect(checkRecordings(reads, withoutTable)).toContain('subscribersCount: reads TABLE_NAME, which its Environment does not set');
  });

  it('maps every SDK command the service sends to its IAM action, and reports one it does not know', () => {
    expect(callsOf('S3Client', 'CompleteMultipartUploadCommand', { Bucket: 'b', Key: 'k' }).map((c) => c.action)).toEqual(['s3:PutObject']);
    expect(callsOf('S3Client', 'UploadPartCopyCommand', { Bucket: 'b', Key: 'k', CopySource: 'b/src/a' }).map((c) => [c.action, c.resource?.key])).toEqual([
      ['s3:PutObject', 'k'],
      ['s3:GetObject', 'src/a'],
    ]);
    expect(callsOf('DynamoDBClient', 'TransactWriteItemsCommand', { TransactItems: [{ Put: { TableName: 't' } }, { ConditionCheck: { TableName: 't' } }] }).map((c) => c.action)).toEqual([
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ]);
    expect(callsOf('SQSClient', 'SendMessageBatchCommand', { QueueUrl: 'q' }).map((c) => c.action)).toEqual(['sqs:SendMessage']);
    // A service the recorder has no rule for: the resource is the input's value an environment variable names. The
    // client is EventBridge, the IAM prefix `events`.
    process.env.TEST_EVENT_BUS = 'bus-of-the-test';
    expect(callsOf('EventBridgeClient', 'PutEventsCommand', { Entries: [{ EventBusName: 'bus-of-the-test', Detail: '{}' }] })).toEqual([
      { action: 'events:PutEvents', resource: { name: 'bus-of-the-test', env: ['TEST_EVENT_BUS'] } },
    ]);
    delete process.env.TEST_EVENT_BUS;
    const unknown: Recording = { fn: 'filesGet', kind: 'call', command: 'S3Client.RestoreObjectCommand', ...callsOf('S3Client', 'RestoreObjectCommand', { Bucket: 'b', Key: 'k' })[0] };
    expect(checkRecordings([unknown], template)).toEqual(['filesGet: S3Client.RestoreObjectCommand has no IAM action in infra/local/recording.ts']);
  });

  it('finds the job table\'s triggers in the stack, and a trigger that differs', () => {
    expect(checkTriggers(template)).toEqual([]);
    const changed = structuredClone(template);
    for (const r of Object.values(changed.Resources)) {
      if (r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties!.BatchSize === 1000) r.Properties!.MaximumBatchingWindowInSeconds = 5;
      if (r.Type === 'AWS::Events::Rule' && r.Properties!.ScheduleExpression === 'rate(2 minutes)') r.Properties!.ScheduleExpression = 'rate(5 minutes)';
    }
    const fanout = mappingOf(changed, 'webhooksFanout');
    delete fanout.FunctionResponseTypes;
    const changeQueue = changed.Resources[(fanout.EventSourceArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]];
    (changeQueue.Properties!.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount = 3;
    (mappingOf(changed, 'webhooksDeliver').ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency = 50;
    expect(checkTriggers(changed)).toEqual([
      'sesEvents: maxBatchingWindowSeconds 5 in the stack, 120 in the job table',
      'trackingViews: maxBatchingWindowSeconds 5 in the stack, 20 in the job table',
      'subscribersStream: maxBatchingWindowSeconds 5 in the stack, 1 in the job table',
      'importsSweeper: schedule rate(5 minutes) in the stack, rate(2 minutes) in the job table',
      'webhooksFanout: maxReceiveCount 3 in the stack, 5 in the job table',
      'webhooksFanout: partialBatchResponses false in the stack, true in the job table',
      'webhooksDeliver: maxConcurrency 50 in the stack, 20 in the job table',
    ]);
  });

  it('finds a success destination the job table does not give, one it gives that is missing, and fewer retries than it says', () => {
    const changed = structuredClone(template);
    const configOf = (job: string) => {
      const fn = functionView(changed, job)!.logicalId;
      return Object.values(changed.Resources).find((r) => r.Type === 'AWS::Lambda::EventInvokeConfig' && (r.Properties!.FunctionName as { Ref: string }).Ref === fn)!.Properties!;
    };
    const changeQueue = (mappingOf(changed, 'webhooksFanout').EventSourceArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    type Destinations = { OnSuccess?: unknown };
    delete (configOf('importsWorkerFailed').DestinationConfig as Destinations).OnSuccess;
    (configOf('optinReminders').DestinationConfig as Destinations).OnSuccess = { Destination: { 'Fn::GetAtt': [changeQueue, 'Arn'] } };
    configOf('importsWorker').MaximumRetryAttempts = 0;
    expect(checkTriggers(changed)).toEqual([
      `optinReminders: async results go to <${changeQueue}.Arn> in the stack, nowhere in the job table`,
      'importsWorkerFailed: retry attempts of importsWorker 0 in the stack, 2 in the job table',
      `importsWorkerFailed: async results go to no destination in the stack, the change queue <${changeQueue}.Arn> in the job table`,
    ]);
    const noChangeJob = jobList.filter((j) => j.id !== 'webhooksFanout');
    expect(checkTriggers(template, noChangeJob)).toEqual(
      ['importsWorker', 'importsWorkerFailed'].map((id) => `${id}: async results go to the change queue in the job table, but no job reads it (an eventChanges trigger with an event source mapping)`),
    );
  });

  it('finds a trigger kind it does not check', () => {
    const feeds = jobList.find((j) => j.id === 'catalogueFeeds')!;
    const streamed = { ...feeds, trigger: { streamRecords: { batchSize: 100 } } as unknown as JobTrigger };
    expect(checkTriggers(template, [streamed])).toEqual(['catalogueFeeds: trigger streamRecords is not checked against the stack (test/helpers/deployed-access.ts)']);
  });
});
