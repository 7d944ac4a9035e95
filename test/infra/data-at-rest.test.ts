/**
 * Data at rest on the synthesized template: the imports bucket (publishers' uploaded address lists) writes S3
 * server access logs; the `customerManagedKey` option puts the table and both data buckets under one rotated
 * customer-managed KMS key, which the functions that read or write them may use; off by default.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { foldedTemplate, testApp, type CfnResource } from '../helpers/cdk.js';

let plain: Template;
let keyed: Template;

beforeAll(() => {
  // cdk.json's flags, as `cdk synth` applies them (server access logs by bucket policy, not ACL).
  plain = foldedTemplate(new ServiceStack(testApp(), 'Plain'));
  // The option needs the region (a table's replica key is per region); without one it says so.
  expect(() => new ServiceStack(testApp(), 'NoRegion', { customerManagedKey: true })).toThrow(/needs the stack's region/);
  keyed = foldedTemplate(new ServiceStack(testApp(), 'Keyed', { customerManagedKey: true, env: { account: '111111111111', region: 'eu-west-1' } }));
}, 240_000);

const only = (template: Template, type: string, logicalIdStart: string): [string, CfnResource] => {
  const found = Object.entries(template.findResources(type) as Record<string, CfnResource>).filter(([id]) => id.startsWith(logicalIdStart));
  expect(found.map(([id]) => id)).toHaveLength(1);
  return found[0];
};
const encryptionOf = (bucket: CfnResource) => (bucket.Properties.BucketEncryption as { ServerSideEncryptionConfiguration: Array<Record<string, unknown>> }).ServerSideEncryptionConfiguration[0];

describe('data at rest', () => {
  it('the imports bucket logs every request to the access-log bucket (SSE-S3, public access blocked, TLS only, kept a year)', () => {
    for (const template of [plain, keyed]) {
      const [logsId, logs] = only(template, 'AWS::S3::Bucket', 'AccessLogs');
      const [, imports] = only(template, 'AWS::S3::Bucket', 'Imports');
      expect(imports.Properties.LoggingConfiguration).toEqual({ DestinationBucketName: { Ref: logsId }, LogFilePrefix: 'imports/' });
      expect(encryptionOf(logs)).toEqual({ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } });
      expect(logs.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
      expect(JSON.stringify(logs.Properties.LifecycleConfiguration)).toContain('"ExpirationInDays":365');
      const policy = Object.values(template.findResources('AWS::S3::BucketPolicy') as Record<string, CfnResource>).find((p) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: logsId }))!;
      const statements = JSON.stringify(policy.Properties.PolicyDocument.Statement);
      expect(statements).toContain('logging.s3.amazonaws.com');
      expect(statements).toContain('"aws:SecureTransport":"false"');
    }
  });

  it('off by default: no customer-managed key; the table on the AWS-owned key, the buckets on S3-managed keys', () => {
    expect(Object.keys(plain.findResources('AWS::KMS::Key')).filter((id) => id.startsWith('DataKey'))).toEqual([]);
    const [, table] = only(plain, 'AWS::DynamoDB::GlobalTable', 'Table');
    expect(table.Properties.SSESpecification).toBeUndefined();
    for (const name of ['Imports', 'Events']) expect(encryptionOf(only(plain, 'AWS::S3::Bucket', name)[1])).toEqual({ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } });
  });

  it('with customerManagedKey: the table and both buckets under one rotated key that the functions using them may use', () => {
    const [keyId, key] = only(keyed, 'AWS::KMS::Key', 'DataKey');
    expect([key.Properties.EnableKeyRotation, key.DeletionPolicy]).toEqual([true, 'Retain']);
    const [, table] = only(keyed, 'AWS::DynamoDB::GlobalTable', 'Table');
    expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    const replicas = table.Properties.Replicas as Array<{ SSESpecification?: { KMSMasterKeyId: unknown } }>;
    expect(replicas.map((r) => r.SSESpecification)).toEqual([{ KMSMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } }]);
    for (const name of ['Imports', 'Events']) {
      const bucket = only(keyed, 'AWS::S3::Bucket', name)[1];
      expect(encryptionOf(bucket)).toEqual({ ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] } }, BucketKeyEnabled: true });
    }
    // Every function that may read the table may decrypt with the key (the grants come with the table's and buckets').
    const policies = Object.values(keyed.findResources('AWS::IAM::Policy') as Record<string, CfnResource>).map((p) => JSON.stringify(p.Properties.PolicyDocument.Statement));
    const readsTable = policies.filter((p) => p.includes('dynamodb:GetItem') || p.includes('dynamodb:Query'));
    expect(readsTable.length).toBeGreaterThan(10);
    for (const p of readsTable) expect(p).toMatch(/kms:Decrypt/);
  });
});
