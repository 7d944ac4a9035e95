import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { tableDefinition } from '../../shared/db/table.js';
import { jobList } from '../../shared/jobs.js';
import { routeList } from '../../shared/routes.js';
import type { Access } from '../../shared/http/route.js';
import { foldedTemplate, type CfnResource } from '../helpers/cdk.js';

let template: Template;
type Resource = CfnResource;

beforeAll(() => {
  // Skip esbuild bundling here; `npx cdk synth` bundles for real.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  template = foldedTemplate(new ServiceStack(app, 'Test'));
});

/** The IAM actions granted to the function whose logical id starts with the row id. */
function actionsOf(id: string): string[] {
  const functions = template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const [, fn] = Object.entries(functions).find(([logicalId]) => new RegExp(`^${id}[0-9A-F]{8}$`).test(logicalId)) ?? [];
  expect(fn, `function for ${id}`).toBeDefined();
  const role = fn!.Properties.Role['Fn::GetAtt'][0];
  const policies = Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>).filter((p) =>
    (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role),
  );
  return policies.flatMap((p) => p.Properties.PolicyDocument.Statement.flatMap((s) => [s.Action].flat()));
}

function expectGrants(id: string, access: Access) {
  const actions = actionsOf(id);
  expect(actions.includes('dynamodb:GetItem'), `${id} table read`).toBe(access.table !== undefined);
  expect(actions.includes('dynamodb:PutItem'), `${id} table write`).toBe(access.table === 'RW');
  const s3Writes = actions.filter((a) => a === 's3:PutObject').length;
  const s3Reads = actions.filter((a) => a === 's3:GetObject*').length;
  const buckets = [access.imports, access.events];
  expect(s3Reads, `${id} bucket reads`).toBe(buckets.filter((b) => b === 'R' || b === 'RW').length);
  expect(s3Writes, `${id} bucket writes`).toBe(buckets.filter((b) => b === 'W' || b === 'RW').length);
  // A function that only writes (events) cannot delete or overwrite-by-delete what others recorded.
  expect(actions.some((a) => a.startsWith('s3:DeleteObject')), `${id} deletes`).toBe(buckets.includes('RW'));
  expect(actions.includes('ses:SendEmail'), `${id} mail`).toBe(access.mail === true);
  expect(sendsToTrackingQueue(id), `${id} tracking queue`).toBe(access.trackingQueue === true);
}

/** True when the function's role may send to the page-view queue (scheduled jobs also send to their own failure queues). */
function sendsToTrackingQueue(id: string): boolean {
  const functions = template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const [, fn] = Object.entries(functions).find(([logicalId]) => new RegExp(`^${id}[0-9A-F]{8}$`).test(logicalId))!;
  const role = fn.Properties.Role['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>)
    .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
    .some((s) => [s.Action].flat().includes('sqs:SendMessage') && JSON.stringify(s.Resource).includes('TrackingQueue'));
}

describe('ServiceStack', () => {
  it('has one function per route row, per job row and the fallback, all Node.js 22 on arm64', () => {
    // CDK adds its own function for S3 bucket notifications (the importsUpload trigger); it is not one of ours.
    const functions = Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter(
      ([logicalId]) => !logicalId.startsWith('BucketNotificationsHandler'),
    );
    expect(functions).toHaveLength(routeList.length + jobList.length + 1);
    for (const [logicalId, fn] of functions) {
      expect(fn.Properties, logicalId).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
    }
  });

  it("gives every function's Node.js the young generation Lambda's runtime gives it: a semi-space of 5 % of its memory", () => {
    const functions = Object.entries(template.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter(
      ([logicalId]) => !logicalId.startsWith('BucketNotificationsHandler'),
    );
    const sizes = new Set<number>();
    for (const [logicalId, fn] of functions) {
      const memory = fn.Properties.MemorySize as number;
      sizes.add(memory);
      expect(fn.Properties.Environment.Variables.NODE_OPTIONS, logicalId).toBe(`--max-semi-space-size=${Math.floor(memory / 20)}`);
    }
    // Functions of several sizes (512 MB by default, 1,024 for the bulk writers, more for events): each its own.
    expect(sizes.size).toBeGreaterThan(1);
  });

  it('routes every row of the route table, and the rest to the fallback', () => {
    for (const route of routeList) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `${route.method} ${route.path}` });
    }
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
  });

  it('grants each function exactly what its row declares', () => {
    for (const row of [...routeList, ...jobList]) expectGrants(row.id, row.access);
    expectGrants('fallback', {});
  });

  it('defines the single table from its one definition, on demand, with PITR and TTL', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
      GlobalSecondaryIndexes: tableDefinition.globalIndexes.map((g) =>
        Match.objectLike({ IndexName: g.name, KeySchema: [{ AttributeName: g.partitionKey, KeyType: 'HASH' }, { AttributeName: g.sortKey, KeyType: 'RANGE' }] }),
      ),
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
    });
  });

  it('asks for the opt-in sender at deploy time and names each job function in the outputs', () => {
    template.hasParameter('MailFrom', { Type: 'String' });
    for (const job of jobList) template.hasOutput(`${job.id}FunctionName`, {});
  });

  it('keeps the buckets (imports, events, Athena results, access logs) encrypted and private', () => {
    template.resourceCountIs('AWS::S3::Bucket', 4);
    template.allResourcesProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
  });
});
