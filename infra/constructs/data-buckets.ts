/** The stack's two data buckets (imports, events) and the imports bucket's access-log bucket, with their lifecycle rules. */
import { Duration, RemovalPolicy, Validations, type Stack } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/** Acknowledges one cdk-nag rule on a construct and what it contains, with the reason. */
const nagOk = (scope: Construct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

/**
 * The imports bucket (objects expire after 90 days; every request to it in the server access log) and the
 * versioned events bucket. With the customer-managed key, both are encrypted with it (S3 Bucket Keys: one KMS
 * request per object key period, not per object).
 */
export function dataBuckets(stack: Stack, dataKey: kms.IKey | undefined): { importsBucket: s3.Bucket; eventsBucket: s3.Bucket } {
  // Server access logs accept SSE-S3 only; kept a year.
  const accessLogs = new s3.Bucket(stack, 'AccessLogs', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [{ expiration: Duration.days(365) }],
  });
  nagOk(accessLogs, 'AwsSolutions::AwsSolutions-S1', 'The access-log bucket itself: logging it into itself would loop.');
  const bucket = (name: string, expireDays?: number, logged = false) =>
    new s3.Bucket(stack, name, {
      ...(dataKey ? { encryption: s3.BucketEncryption.KMS, encryptionKey: dataKey, bucketKeyEnabled: true } : { encryption: s3.BucketEncryption.S3_MANAGED }),
      ...(logged ? { serverAccessLogsBucket: accessLogs, serverAccessLogsPrefix: `${name.toLowerCase()}/` } : {}),
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        ...(expireDays ? [{ expiration: Duration.days(expireDays) }] : []),
      ],
    });
  const importsBucket = bucket('Imports', 90, true);
  // Newsletter picks' results (shared/picks/objects.ts) are kept a week, as their jobs are.
  importsBucket.addLifecycleRule({ prefix: 'picks/', expiration: Duration.days(7) });
  const eventsBucket = bucket('Events');
  nagOk(eventsBucket, 'AwsSolutions::AwsSolutions-S1', 'Object access is audited with CloudTrail data events where needed; an access-log bucket would itself be unlogged.');
  // Raw event records are the only copy of what happened: an overwrite or delete keeps the old version for 30 days.
  (eventsBucket.node.defaultChild as s3.CfnBucket).versioningConfiguration = { status: 'Enabled' };
  eventsBucket.addLifecycleRule({ noncurrentVersionExpiration: Duration.days(30), expiredObjectDeleteMarker: true });
  derivedEventFileRules(eventsBucket);
  return { importsBucket, eventsBucket };
}

/**
 * Merge runs of an assembly that crashed; running files of open days and the hours of recent days (rebuilt
 * from the raw records on demand). Their replaced versions are derived data too: a day's running file is
 * rewritten on every download that finds new records, so they go after a day, not after the bucket's 30.
 */
function derivedEventFileRules(eventsBucket: s3.Bucket): void {
  eventsBucket.addLifecycleRule({ prefix: 'tmp/', expiration: Duration.days(2), noncurrentVersionExpiration: Duration.days(1) });
  for (const prefix of ['partial/', 'partial-raw/', 'hours/', 'hours-raw/']) {
    eventsBucket.addLifecycleRule({ prefix, expiration: Duration.days(7), noncurrentVersionExpiration: Duration.days(1) });
  }
}
