import { Match, type Template } from 'aws-cdk-lib/assertions';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { addNagChecks } from '../../infra/nag.js';
import { accessLogRetentionDays, reservedConcurrency, routeThrottles, stageThrottle } from '../../infra/protection.js';
import { ServiceStack } from '../../infra/service-stack.js';
import { jobList } from '../../shared/jobs.js';
import { routeList } from '../../shared/routes.js';
import { cdkContext, foldedTemplate, testApp, type CfnResource } from '../helpers/cdk.js';
import { projectRoot } from '../../infra/constructs/service-function.js';

type Resources = Record<string, CfnResource>;
interface NagReport {
  pluginReports: Array<{ pluginName: string; violations: Array<{ ruleName: string; violatingConstructs: Array<{ constructPath: string }> }>; suppressedViolations: Array<{ ruleName: string; reason: string }> }>;
}

let template: Template;
let json: string;
let nag: NagReport;

beforeAll(() => {
  // No account or region: the template must stay environment-agnostic.
  const app = testApp();
  addNagChecks(app);
  template = foldedTemplate(new ServiceStack(app, 'Ops', { mailFrom: 'news@example.com' }));
  json = JSON.stringify(template.toJSON());
  const assembly = app.synth();
  nag = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as NagReport;
});

const resources = (type: string) => template.findResources(type) as Resources;
const functionOf = (id: string) => Object.entries(resources('AWS::Lambda::Function')).find(([logicalId]) => new RegExp(`^${id}[0-9A-F]{8}$`).test(logicalId));

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  it('reports no finding that is not acknowledged, and every acknowledgement says why in one line', () => {
    expect(nag.pluginReports.map((p) => p.pluginName).sort()).toEqual(['AwsSolutions', 'Serverless']);
    const findings = nag.pluginReports.flatMap((p) => p.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} ${c.constructPath}`)));
    expect(findings).toEqual([]);
    for (const s of nag.pluginReports.flatMap((p) => p.suppressedViolations)) {
      expect(s.reason.trim().length, s.ruleName).toBeGreaterThan(20);
      expect(s.reason, s.ruleName).not.toContain('\n');
    }
  });

  it('finds what it should: a bucket added without logs or TLS enforcement fails synth', async () => {
    const { Bucket } = await import('aws-cdk-lib/aws-s3');
    const app = testApp();
    addNagChecks(app);
    new Bucket(new ServiceStack(app, 'Bad', { mailFrom: 'news@example.com' }), 'Unchecked');
    // `cdk synth` (and so `cdk deploy`) stops at a finding.
    expect(() => app.synth()).toThrow(/AwsSolutions::AwsSolutions-S1'[\s\S]*AwsSolutions::AwsSolutions-S10'/);
  });
});

describe('environment', () => {
  /** Runs infra/app.ts as `cdk synth` does (the CLI passes context and its default region in the environment). */
  const synthApp = (env: Record<string, string>, context: Record<string, unknown> = {}) => {
    const outdir = mkdtempSync(join(tmpdir(), 'app-'));
    try {
      execFileSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
        cwd: projectRoot,
        env: { ...process.env, AWS_REGION: '', AWS_DEFAULT_REGION: '', ...env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify({ ...cdkContext, ...context, 'aws:cdk:bundling-stacks': [] }) },
        stdio: 'pipe',
      });
      // The parent and its nested stacks' templates (docs/architecture.md, "Stack layout").
      const files = readdirSync(outdir).filter((f) => f.startsWith('NewsletterService') && f.endsWith('.template.json'));
      expect(files).toContain('NewsletterService.template.json');
      expect(files.length).toBeGreaterThan(1);
      return JSON.stringify(files.map((f) => {
        const template = JSON.parse(readFileSync(join(outdir, f), 'utf8')) as { Conditions?: unknown };
        delete template.Conditions; // CDK's per-region conditions list every region by name
        return template;
      }));
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  };

  it('never hard-codes a region or an account when none is given (not even the CLI\'s silent us-east-1)', () => {
    expect(json).not.toMatch(/us-east-1|us-west-2|eu-west-1/);
    expect(json).toContain('AWS::Region');
    const fromCli = synthApp({ CDK_DEFAULT_REGION: 'us-east-1' });
    expect(fromCli).not.toContain('us-east-1');
    expect(fromCli).toContain('AWS::Region');
  });

  it('takes the region from -c region=… or AWS_REGION', () => {
    expect(synthApp({}, { region: 'eu-west-3' })).toContain('eu-west-3');
    expect(synthApp({ AWS_REGION: 'ap-south-1' })).toContain('ap-south-1');
  });
});

describe('observe: alarms and dashboard', () => {
  const alarms = () => Object.values(resources('AWS::CloudWatch::Alarm'));
  const topicArn = () => Object.keys(resources('AWS::SNS::Topic')).find((id) => id.includes('AlarmTopic'))!;

  it('alarms on Lambda errors and throttles of every function, API 5xx, every dead-letter queue, failed imports and DynamoDB throttling', () => {
    const names = alarms().map((a) => a.Properties.AlarmDescription as string);
    const ids = Object.keys(resources('AWS::CloudWatch::Alarm'));
    for (const row of [...routeList, ...jobList, { id: 'fallback' }]) {
      expect(ids.some((id) => id.startsWith(`${row.id}Errors`)), `${row.id} errors`).toBe(true);
      expect(ids.some((id) => id.startsWith(`${row.id}Throttles`)), `${row.id} throttles`).toBe(true);
    }
    for (const queue of Object.keys(resources('AWS::SQS::Queue')).filter((id) => /DeadLetters|FailedRuns|Undelivered/.test(id))) {
      const alarm = alarms().find((a) => JSON.stringify(a.Properties.Dimensions ?? []).includes(queue));
      expect(alarm, `alarm on ${queue}`).toBeDefined();
      expect(alarm!.Properties).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    }
    expect(ids.some((id) => id.startsWith('Api5xxRate'))).toBe(true);
    expect(ids.some((id) => id.startsWith('ImportsFailed'))).toBe(true);
    expect(ids.some((id) => id.startsWith('TableThrottles'))).toBe(true);
    const feed = Object.entries(resources('AWS::CloudWatch::Alarm')).find(([id]) => id.startsWith('CatalogueFeedFailing'))?.[1];
    expect(feed?.Properties).toMatchObject({ MetricName: 'CatalogueFeedFailures', Namespace: 'NewsletterService', Period: 1800, Threshold: 3 });
    expect(names.every((n) => n.includes('Runbook: docs/operations.md#'))).toBe(true);
  });

  it('every alarm notifies the alarm topic, which an optional email parameter subscribes to', () => {
    for (const a of alarms()) expect(JSON.stringify(a.Properties.AlarmActions)).toContain(topicArn());
    template.hasParameter('*', { Type: 'String', Default: '', Description: Match.stringLikeRegexp('Address notified of every alarm') });
    const [subscription] = Object.values(resources('AWS::SNS::Subscription')).filter((s) => s.Properties.Protocol === 'email');
    expect(subscription.Condition).toBeDefined();
  });

  it('has one dashboard with the service metrics', () => {
    const dashboards = Object.values(resources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0].Properties.DashboardBody);
    for (const metric of ['SubscribersApplied', 'ImportLinesFailed', 'EventsRecorded', 'RecommendationsFromPopularity', 'CatalogueFeedFailures', 'OptinsConfirmed', 'ServerErrors']) expect(body).toContain(metric);
  });
});

describe('protect', () => {
  it('throttles the stage, and the public routes tighter, from infra/protection.ts', () => {
    const [stage] = Object.values(resources('AWS::ApiGatewayV2::Stage'));
    expect(stage.Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: stageThrottle.rateLimit, ThrottlingBurstLimit: stageThrottle.burstLimit });
    for (const [id, limit] of Object.entries(routeThrottles)) {
      const route = routeList.find((r) => r.id === id)!;
      expect(stage.Properties.RouteSettings[`${route.method} ${route.path}`], id).toEqual({ ThrottlingRateLimit: limit.rateLimit, ThrottlingBurstLimit: limit.burstLimit });
      // POST /v1/track takes a viral article's views (two reads and one queued message each, docs/operations.md), under the account's 10,000/s; every other public route stays below the stage default.
      expect(limit.rateLimit, id).toBeLessThan(id === 'trackPost' ? 10_000 : stageThrottle.rateLimit);
    }
    expect(routeThrottles.tokenGet.rateLimit).toBeLessThanOrEqual(10);
  });

  it('writes JSON access logs to a log group with retention', () => {
    const [stage] = Object.values(resources('AWS::ApiGatewayV2::Stage'));
    expect(JSON.parse(stage.Properties.AccessLogSettings.Format)).toMatchObject({ requestId: '$context.requestId', status: '$context.status', routeKey: '$context.routeKey' });
    const groups = Object.values(resources('AWS::Logs::LogGroup')).filter((g) => g.Properties.RetentionInDays === accessLogRetentionDays);
    expect(groups.length).toBeGreaterThan(0);
  });

  it('reserves concurrency for the workers and caps the public routes', () => {
    for (const [id, n] of Object.entries(reservedConcurrency)) expect(functionOf(id)?.[1].Properties.ReservedConcurrentExecutions, id).toBe(n);
    expect(reservedConcurrency.importsWorker).toBeGreaterThan(0);
    expect(reservedConcurrency.sesEvents).toBeGreaterThan(0);
  });

  it('gives every scheduled job a failure queue (EventBridge DLQ and async onFailure) and the SNS subscription a DLQ', () => {
    for (const rule of Object.values(resources('AWS::Events::Rule'))) expect(rule.Properties.Targets[0].DeadLetterConfig, 'rule DLQ').toBeDefined();
    const scheduled = jobList.filter((j) => 'schedule' in j.trigger);
    const configs = Object.values(resources('AWS::Lambda::EventInvokeConfig'));
    expect(configs.filter((c) => c.Properties.DestinationConfig?.OnFailure).length).toBeGreaterThanOrEqual(scheduled.length);
    const sqsSubscriptions = Object.values(resources('AWS::SNS::Subscription')).filter((s) => s.Properties.Protocol === 'sqs');
    expect(sqsSubscriptions.length).toBeGreaterThan(0);
    for (const s of sqsSubscriptions) expect(s.Properties.RedrivePolicy).toBeDefined();
  });

  it('scopes SES to the sending identity, encrypts SNS, versions the events bucket, protects the table and keeps the queues', () => {
    const statements = Object.values(resources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    const ses = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('ses:')));
    expect(ses.length).toBeGreaterThan(0);
    for (const s of ses) expect(JSON.stringify(s.Resource)).toContain(':identity/');
    for (const s of ses) expect(s.Resource).not.toBe('*');
    for (const topic of Object.values(resources('AWS::SNS::Topic'))) expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    const versioned = Object.values(resources('AWS::S3::Bucket')).filter((b) => b.Properties.VersioningConfiguration?.Status === 'Enabled');
    expect(versioned).toHaveLength(1);
    expect(JSON.stringify(versioned[0].Properties.LifecycleConfiguration)).toContain('NoncurrentVersionExpiration');
    const [table] = Object.values(resources('AWS::DynamoDB::GlobalTable'));
    expect(table.Properties.Replicas[0].DeletionProtectionEnabled).toBe(true);
    for (const [id, queue] of Object.entries(resources('AWS::SQS::Queue'))) expect(queue.DeletionPolicy, id).toBe('Retain');
  });
});
