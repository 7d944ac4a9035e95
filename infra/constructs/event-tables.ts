import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { eventNames } from '../../shared/events/types.js';

export interface EventTablesProps {
  eventsBucket: s3.IBucket;
}

/** First day the date projection offers (earlier days hold no records). */
const FIRST_DAY = '2024-01-01';

/**
 * SQL over the event records: a Glue database with one table over the raw
 * records (`raw/<client>/<event>/<YYYY-MM-DD>/<HH>/*.jsonl`, JSON lines),
 * partitioned by client, event type, day and hour with partition projection
 * (no crawler, no partitions to add), and an Athena workgroup whose results
 * are encrypted in a bucket of their own. The raw records, not the assembled
 * CSV files: those are named by day (`events/<client>/<event>/<day>.csv`) and
 * Athena partitions are folders, so a table over them could not prune by day;
 * the raw layout already has the day and hour as folders, and the download
 * endpoint keeps its files untouched. Queries run in docs/operations.md.
 */
export class EventTables extends Construct {
  readonly databaseName: string;
  readonly tableName = 'events';
  readonly workgroupName: string;
  readonly resultsBucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: EventTablesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const suffix = stack.stackName.toLowerCase().replace(/[^a-z0-9]+/g, '_');
    this.databaseName = `newsletter_events_${suffix}`;
    this.workgroupName = `${stack.stackName}-events`;

    const database = new glue.CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: { name: this.databaseName, description: 'Event records of the newsletter service (docs/operations.md "SQL over the events")' },
    });

    const str = (name: string, comment?: string) => ({ name, type: 'string', comment });
    const bucket = props.eventsBucket.bucketName;
    const table = new glue.CfnTable(this, 'Table', {
      catalogId: stack.account,
      databaseName: this.databaseName,
      tableInput: {
        name: this.tableName,
        description: 'One row per recorded event (JSON lines of raw/); the columns of spec §6, absent where an event type has none',
        tableType: 'EXTERNAL_TABLE',
        parameters: {
          classification: 'json',
          'projection.enabled': 'true',
          // Every query names its client (WHERE client_id = '…'): a publisher's queries read only its prefix.
          'projection.client_id.type': 'injected',
          'projection.event.type': 'enum',
          'projection.event.values': eventNames.join(','),
          'projection.day.type': 'date',
          'projection.day.format': 'yyyy-MM-dd',
          'projection.day.range': `${FIRST_DAY},NOW`,
          'projection.day.interval': '1',
          'projection.day.interval.unit': 'DAYS',
          'projection.hour.type': 'integer',
          'projection.hour.range': '0,23',
          'projection.hour.digits': '2',
          'storage.location.template': `s3://${bucket}/raw/\${client_id}/\${event}/\${day}/\${hour}/`,
        },
        partitionKeys: [str('client_id'), str('event', 'nl_send, nl_display, nl_click, nl_bounce, nl_complaint, nl_subscribe, nl_unsubscribe'), str('day', 'YYYY-MM-DD (UTC)'), { name: 'hour', type: 'int', comment: '0-23 (UTC)' }],
        storageDescriptor: {
          location: `s3://${bucket}/raw/`,
          inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          serdeInfo: {
            serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
            // `date` and `_id` are awkward column names in SQL: read as event_time and event_id.
            parameters: { 'ignore.malformed.json': 'true', 'mapping.event_time': 'date', 'mapping.event_id': '_id', 'case.insensitive': 'false' },
          },
          columns: [
            str('event_time', 'ISO 8601 UTC with milliseconds: from_iso8601_timestamp(event_time)'),
            str('email'),
            { name: 'email_list_id', type: 'int' },
            str('campaign_id'),
            str('newsletter_id'),
            str('target_id'),
            str('target_url'),
            { name: 'target_position', type: 'int' },
            str('cause', 'nl_unsubscribe'),
            str('type', 'nl_bounce, nl_complaint'),
            str('message', 'nl_bounce'),
            str('event_id', 'SES events: the same id on a redelivered notification (count DISTINCT)'),
            str('guid', "nl_subscribe, nl_unsubscribe: the subscriber's guid (records written before guids were recorded have none)"),
          ],
        },
      },
    });
    table.node.addDependency(database);

    this.resultsBucket = new s3.Bucket(this, 'Results', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ expiration: Duration.days(30) }, { abortIncompleteMultipartUploadAfter: Duration.days(1) }],
    });
    Validations.of(this.resultsBucket).acknowledge({ id: 'AwsSolutions::AwsSolutions-S1', reason: 'Query results expire after 30 days; Athena itself records who ran which query (CloudTrail).' });

    new athena.CfnWorkGroup(this, 'Workgroup', {
      name: this.workgroupName,
      description: 'SQL over the event records (database and table in the stack outputs)',
      state: 'ENABLED',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        // Users of the workgroup cannot send results elsewhere or unencrypted.
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        // A query that would scan more than 100 GB ($0.50) is cancelled.
        bytesScannedCutoffPerQuery: 100 * 1024 ** 3,
        resultConfiguration: {
          outputLocation: `s3://${this.resultsBucket.bucketName}/results/`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });
  }
}
