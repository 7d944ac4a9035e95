import { type CfnElement, Duration, Names, Stack, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { type Construct } from 'constructs';
import { resolve } from 'node:path';
import type { Access } from '../../shared/http/route.js';
import { bundling, POWERTOOLS_LAYER } from './bundling.js';
import { DEFAULT_FUNCTION_MEMORY_MB, semiSpaceMb } from '../heap.js';

export const projectRoot = resolve(import.meta.dirname, '../..');

export interface ServiceResources {
  table: ITableV2;
  imports: IBucket;
  events: IBucket;
  environment: Record<string, string>;
  /** The SES identities (ARNs) mail may be sent from. */
  mailIdentityArns: string[];
  /** The page-view queue (rows with `access.trackingQueue` may send to it). */
  trackingQueue?: IQueue;
  /** The webhook delivery queue and its dead-letter queue (rows with `access.webhookQueue` send to both). */
  webhooks?: { queue: IQueue; deadLetters: IQueue };
  /** The change bus (rows with `access.eventBus` put events on it). */
  eventBus?: IEventBus;
}

export interface ServiceFunctionProps {
  /** Handler entry relative to the project root. */
  entry: string;
  access: Access;
  resources: ServiceResources;
  timeoutSeconds?: number;
  memoryMb?: number;
  environment?: Record<string, string>;
  /** Reserved concurrency (infra/protection.ts). */
  reservedConcurrency?: number;
  /** Package files copied beside the bundle (name → path in node_modules), never bundled into it. */
  assets?: Record<string, string>;
}

/** The Powertools layer (infra/constructs/bundling.ts), once per stack. */
function powertoolsLayer(scope: Construct): lambda.ILayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('PowertoolsLayer') as lambda.ILayerVersion | undefined;
  if (existing) return existing;
  const { account, name, version } = POWERTOOLS_LAYER;
  return lambda.LayerVersion.fromLayerVersionArn(stack, 'PowertoolsLayer', `arn:${stack.partition}:lambda:${stack.region}:${account}:layer:${name}:${version}`);
}

/**
 * A NodejsFunction with the project's defaults (Node.js 22, arm64, minified
 * esbuild bundle, X-Ray tracing, a log group with retention) and exactly the
 * grants its route or job row declares.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { resources, access } = props;
    super(scope, id, {
      entry: resolve(projectRoot, props.entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: resolve(projectRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb ?? DEFAULT_FUNCTION_MEMORY_MB,
      timeout: Duration.seconds(props.timeoutSeconds ?? 29),
      tracing: lambda.Tracing.ACTIVE,
      layers: [powertoolsLayer(scope)],
      reservedConcurrentExecutions: props.reservedConcurrency,
      logGroup: new logs.LogGroup(scope, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH }),
      environment: { NODE_OPTIONS: `--max-semi-space-size=${semiSpaceMb(props.memoryMb ?? DEFAULT_FUNCTION_MEMORY_MB)}`, ...resources.environment, ...props.environment },
      bundling: {
        ...bundling,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) =>
            Object.entries(props.assets ?? {}).map(([name, packagePath]) => `cp "${inputDir}/node_modules/${packagePath}" "${outputDir}/${name}"`),
        },
      },
    });
    if (access.table === 'R') resources.table.grantReadData(this);
    if (access.table === 'RW') {
      resources.table.grantReadWriteData(this);
      // Conditional writes in batches (shared/db/client.ts executeStatements) are PartiQL statements.
      resources.table.grant(this, 'dynamodb:PartiQLInsert', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete');
    }
    for (const [name, bucket] of [['imports', resources.imports], ['events', resources.events]] as const) {
      if (access[name] === 'R') bucket.grantRead(this);
      if (access[name] === 'W') bucket.grantPut(this);
      if (access[name] === 'RW') bucket.grantReadWrite(this);
    }
    const nag = (id: string, reason: string) => Validations.of(this).acknowledge({ id, reason });
    nag('AwsSolutions::AwsSolutions-L1', 'Node.js 22 is the runtime the bundles target and the tests run against; a runtime change is its own change.');
    nag('Serverless::Serverless-LambdaLatestVersion', 'Node.js 22 is the runtime the bundles target and the tests run against; a runtime change is its own change.');
    nag('Serverless::Serverless-LambdaDLQ', 'HTTP functions are invoked synchronously (errors go to the caller); async jobs have an onFailure destination or a queue DLQ instead.');
    nag('AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', 'It only writes to the function\'s own log group.');
    nag('AwsSolutions::AwsSolutions-IAM5[Resource::*]', 'X-Ray PutTraceSegments/PutTelemetryRecords have no resource ARNs.');
    // A resource of this stack by its logical id; one of the parent stack (for a function in a nested stack) by the parameter CDK passes it as.
    const arnOf = (c: Construct) => {
      const cfn = c.node.defaultChild as CfnElement;
      return Stack.of(cfn) === Stack.of(this) ? `<${Stack.of(this).getLogicalId(cfn)}.Arn>` : `<referenceto${Names.nodeUniqueId(cfn.node)}Arn>`;
    };
    const grantWildcards = [
      `Resource::${arnOf(resources.table)}/index/*`,
      `Resource::${arnOf(resources.events)}/*`,
      `Resource::${arnOf(resources.imports)}/*`,
      ...['Abort*', 'List*', 'GetObject*', 'GetBucket*', 'DeleteObject*'].map((a) => `Action::s3:${a}`),
    ];
    for (const finding of grantWildcards) nag(`AwsSolutions::AwsSolutions-IAM5[${finding}]`, 'A CDK grant of the access its row declares, scoped to this table\'s indexes or this bucket\'s objects.');
    if (access.trackingQueue) {
      if (!resources.trackingQueue) throw new Error(`${id}: access.trackingQueue without a tracking queue (no job with a trackingQueue trigger)`);
      // SendMessage only (grantSendMessages would add GetQueueAttributes and GetQueueUrl).
      this.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [resources.trackingQueue.queueArn] }));
    }
    if (access.webhookQueue) {
      if (!resources.webhooks) throw new Error(`${id}: access.webhookQueue without a webhook queue (no job with a webhookDeliveries trigger)`);
      const { queue, deadLetters } = resources.webhooks;
      this.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn, deadLetters.queueArn] }));
      this.addEnvironment('WEBHOOK_QUEUE_URL', queue.queueUrl);
      this.addEnvironment('WEBHOOK_DEAD_LETTER_QUEUE_URL', deadLetters.queueUrl);
    }
    if (access.eventBus) {
      if (!resources.eventBus) throw new Error(`${id}: access.eventBus without a change bus`);
      this.addToRolePolicy(new iam.PolicyStatement({ actions: ['events:PutEvents'], resources: [resources.eventBus.eventBusArn] }));
      this.addEnvironment('EVENT_BUS_NAME', resources.eventBus.eventBusName);
    }
    if (access.mail) {
      this.addToRolePolicy(new iam.PolicyStatement({ actions: ['ses:SendEmail', 'ses:SendRawEmail'], resources: resources.mailIdentityArns }));
    }
  }
}
