import { Aws, type CfnElement, CfnOutput, CfnParameter, Duration, Fn, NestedStack, RemovalPolicy, Stack, Token, Validations, type StackProps } from 'aws-cdk-lib';
import { CfnIntegration, CfnRoute, type CfnStage, type CorsHttpMethod, HttpApi, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LambdaDestination, SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import * as lambdaEvents from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { tableDefinition } from '../shared/db/table.js';
import { corsPolicy } from '../shared/http/cors.js';
import { jobList, type JobId, type JobTrigger } from '../shared/jobs.js';
import { fallbackHandler, routeList } from '../shared/routes.js';
import { CanaryReleases } from './constructs/canary.js';
import { EventTables } from './constructs/event-tables.js';
import { dataBuckets } from './constructs/data-buckets.js';
import { Operations } from './constructs/operations.js';
import { ServiceFunction, type ServiceResources } from './constructs/service-function.js';
import { accessLogRetentionDays, reservedConcurrencyOf, routeThrottle, stageThrottle } from './protection.js';

export type RouteRow = (typeof routeList)[number];

export interface ServiceStackProps extends StackProps {
  /** Sender address of opt-in emails (a verified SES identity). */
  mailFrom?: string;
  /** The route rows to build (default: the route table). A seam for the infra tests, which prove the stack's headroom with more rows. */
  routes?: readonly RouteRow[];
  /**
   * A customer-managed KMS key (rotated yearly) for the table and the buckets, instead of the AWS-owned (table) and
   * S3-managed (buckets) keys: key use shows in CloudTrail and revoking it locks the data. Off by default; its cost
   * is in docs/capacity.md ("Data at rest"). `cdk deploy -c dataKey=customer-managed`.
   */
  customerManagedKey?: boolean;
}

/**
 * How many nested stacks hold the API's route functions (docs/architecture.md, "Stack layout"). A route's stack
 * is fixed by its id ({@link routeStackOf}), so adding a route never moves another; changing this number moves
 * most of them (their functions are replaced on the next deploy).
 */
export const ROUTE_STACKS = 4;

/** The nested stack (0 … ROUTE_STACKS - 1) of a route: FNV-1a of its id, so it never depends on the other rows. */
export function routeStackOf(routeId: string): number {
  let hash = 0x811c9dc5;
  for (const ch of routeId) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return hash % ROUTE_STACKS;
}

/** Acknowledges one cdk-nag rule on a construct and what it contains, with the reason. */
const nagOk = (scope: Construct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

/** Where the jobs' triggers attach: the table, the buckets and the queues. */
interface TriggerTargets {
  table: dynamodb.TableV2;
  importsBucket: s3.Bucket;
  eventsBucket?: s3.Bucket;
  webhooks?: { queue: sqs.Queue; deadLetters: sqs.Queue };
  tracking?: { queue: sqs.Queue; deadLetters: sqs.Queue };
}

type Job = (typeof jobList)[number];
type TriggerOf<K extends string> = Extract<JobTrigger, Record<K, unknown>>;

/** The whole service: one table, two buckets, the HTTP API with one function per route, and the jobs. */
export class ServiceStack extends Stack {
  /** Every dead-letter queue, alarmed by the operations construct. */
  private readonly deadLetterQueues: sqs.IQueue[] = [];
  /** The change queue (S3 notifications of raw event objects; the success destination of jobs with `successTo`). */
  private changeQueue: sqs.Queue | undefined;
  /** SNS topics are encrypted with a key CloudWatch (alarms) and SES (delivery events) may use. */
  private readonly topicKey: kms.Key;
  /** The topic SES publishes delivery events to, made with the first job that consumes them. */
  private sesTopic: sns.Topic | undefined;
  /** The table stream's consumer (alarmed on its iterator age). */
  private streamFunction: ServiceFunction | undefined;

  /** The customer-managed key of the table and the buckets, when the stack has one (`customerManagedKey`). */
  readonly dataKey?: kms.Key;

  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);
    const routes = props.routes ?? routeList;
    // A table's replica key is per region: the template must name it (`-c region=…`).
    if (props.customerManagedKey && Token.isUnresolved(this.region)) throw new Error('customerManagedKey needs the stack\'s region: cdk deploy -c region=<region> -c dataKey=customer-managed');
    this.dataKey = props.customerManagedKey
      ? new kms.Key(this, 'DataKey', { enableKeyRotation: true, description: 'Table and buckets of the newsletter service', removalPolicy: RemovalPolicy.RETAIN })
      : undefined;
    const table = this.table();
    const { importsBucket, eventsBucket } = dataBuckets(this, this.dataKey);
    this.topicKey = new kms.Key(this, 'TopicKey', { enableKeyRotation: true, description: 'SNS topics of the newsletter service', removalPolicy: RemovalPolicy.RETAIN });
    for (const service of ['cloudwatch.amazonaws.com', 'ses.amazonaws.com']) {
      this.topicKey.grant(new iam.ServicePrincipal(service), 'kms:Decrypt', 'kms:GenerateDataKey*');
    }
    const api = this.httpApi(routes);
    const resources = this.resources(table, importsBucket, eventsBucket, api, props.mailFrom ?? this.mailFromParameter());
    const tracking = this.trackingQueue();
    if (tracking) resources.environment.TRACKING_QUEUE_URL = tracking.queue.queueUrl;
    resources.trackingQueue = tracking?.queue;
    // Subscriber changes out: the bus a platform engineer adds rules to, and the webhook delivery queue.
    const changeBus = new events.EventBus(this, 'ChangeBus', { description: 'Subscriber changes of the newsletter service (docs/api.md "Change events")' });
    resources.eventBus = changeBus;
    const webhooks = this.webhookQueue();
    resources.webhooks = webhooks;

    // Every API function is released by CodeDeploy through its `live` alias, which the API invokes (canary.ts).
    const releases = new CanaryReleases(this, 'Releases', { api });
    const functions: Array<{ id: string; fn: ServiceFunction }> = [];
    // CloudFormation allows 500 resources per template: each route's function, role, policy, log group, alias,
    // version, deployment group, invoke permission, API integration and two alarms go in one of ROUTE_STACKS
    // nested stacks; the API, its routes and stage, the jobs and everything that holds data stay here.
    const routeStacks = new Map<number, NestedStack>();
    const routeStack = (n: number) => {
      let nested = routeStacks.get(n);
      if (!nested) routeStacks.set(n, (nested = new NestedStack(this, `RouteFunctions${n}`, { description: `API route functions, part ${n + 1} of ${ROUTE_STACKS} (docs/architecture.md "Stack layout")` })));
      return nested;
    };
    for (const route of routes) functions.push({ id: route.id, fn: this.routeFunction(routeStack(routeStackOf(route.id)), api, route, resources, releases) });
    const fallback = new ServiceFunction(this, 'fallback', { entry: fallbackHandler, access: {}, resources });
    functions.push({ id: 'fallback', fn: fallback });
    // API Gateway's `$default` route: whatever no row matches (also `/`) gets the service's JSON 404/405.
    const defaultRoute = new HttpRoute(this, 'DefaultRoute', { httpApi: api, routeKey: HttpRouteKey.DEFAULT, integration: new HttpLambdaIntegration('fallbackIntegration', releases.release('fallback', fallback)) });

    const jobFunctions = {} as Record<JobId, ServiceFunction>;
    for (const job of jobList) {
      const fn = (jobFunctions[job.id] = new ServiceFunction(this, job.id, {
        entry: job.handler,
        access: job.access,
        resources,
        timeoutSeconds: job.timeoutSeconds ?? 900,
        memoryMb: job.memoryMb,
        reservedConcurrency: reservedConcurrencyOf(job.id),
      }));
      functions.push({ id: job.id, fn });
      this.attachTrigger(job, fn, { table, importsBucket, eventsBucket, webhooks, tracking });
    }
    this.attachFailureJobs(jobFunctions);

    for (const scope of [api, defaultRoute]) nagOk(scope, 'AwsSolutions::AwsSolutions-APIG4', 'The functions authenticate (service token header, or the public keys the spec puts in the path); the spec fixes these routes.');
    // CDK's own handler that configures S3 bucket notifications.
    const notifications = this.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
    if (notifications) {
      nagOk(notifications, 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', 'CDK\'s handler only writes its own logs.');
      nagOk(notifications, 'AwsSolutions::AwsSolutions-IAM5[Resource::*]', 'CDK\'s handler needs s3:PutBucketNotification, which it applies to the imports bucket only.');
    }
    nagOk(this, `AwsSolutions::AwsSolutions-IAM5[Resource::<${this.getLogicalId(jobFunctions.importsWorkerFailed?.node.defaultChild as CfnElement)}.Arn>:*]`, 'Lambda destinations invoke the failure job\'s versions and aliases.');
    const operations = new Operations(this, 'Operations', { api, table, functions, deadLetterQueues: this.deadLetterQueues, topicKey: this.topicKey, trackingQueue: tracking?.queue, streamConsumer: this.streamFunction });
    releases.watch(operations.functionErrorAlarms, operations.alarmTopic);
    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    new CfnOutput(this, 'AlarmTopicArn', { value: operations.alarmTopic.topicArn, description: 'Every alarm notifies this topic' });
    for (const job of jobList) {
      new CfnOutput(this, `${job.id}FunctionName`, { value: jobFunctions[job.id].functionName, description: `Run by hand: aws lambda invoke --function-name <this> --payload '{}' out.json` });
    }
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'ChangeBusName', { value: changeBus.eventBusName, description: 'Subscriber changes (detail-type subscriber.*, import.finished); add rules to this bus' });
    new CfnOutput(this, 'ChangeBusArn', { value: changeBus.eventBusArn });
    if (webhooks) new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: webhooks.deadLetters.queueUrl, description: 'Webhook deliveries that failed every retry (about a day)' });
    const tables = new EventTables(this, 'EventTables', { eventsBucket });
    new CfnOutput(this, 'AthenaWorkgroup', { value: tables.workgroupName, description: 'Athena workgroup for SQL over the event records (docs/operations.md)' });
    new CfnOutput(this, 'GlueDatabase', { value: tables.databaseName });
    if (this.sesTopic) new CfnOutput(this, 'SesEventsTopicArn', { value: this.sesTopic.topicArn, description: 'Point the SES configuration set event destination here' });
  }

  /** The one table, from the table definition (shared/db/table.ts). */
  private table(): dynamodb.TableV2 {
    const { partitionKey, sortKey, ttlAttribute, globalIndexes } = tableDefinition;
    const str = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
    return new dynamodb.TableV2(this, 'Table', {
      partitionKey: str(partitionKey),
      sortKey: str(sortKey),
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: ttlAttribute,
      globalSecondaryIndexes: globalIndexes.map((g) => ({ indexName: g.name, partitionKey: str(g.partitionKey), sortKey: str(g.sortKey) })),
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      ...(this.dataKey ? { encryption: dynamodb.TableEncryptionV2.customerManagedKey(this.dataKey) } : {}),
      // Counts, day statistics and subscriber events derive from it (the `tableStream` job).
      dynamoStream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    });
  }

  private retainedQueue(name: string, props: sqs.QueueProps): sqs.Queue {
    return new sqs.Queue(this, name, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, removalPolicy: RemovalPolicy.RETAIN, ...props });
  }

  /** A dead-letter queue (kept 14 days), alarmed when not empty. */
  private deadLetterQueue(name: string): sqs.Queue {
    const queue = this.retainedQueue(name, { retentionPeriod: Duration.days(14) });
    nagOk(queue, 'AwsSolutions::AwsSolutions-SQS3', 'This queue is a dead-letter queue (alarmed when not empty).');
    nagOk(queue, 'Serverless::Serverless-SQSRedrivePolicy', 'This queue is a dead-letter queue (alarmed when not empty).');
    this.deadLetterQueues.push(queue);
    return queue;
  }

  /** The HTTP API with CORS, throttling and access logs on the default stage (limits: infra/protection.ts). */
  private httpApi(routes: readonly RouteRow[]): HttpApi {
    const api = new HttpApi(this, 'Api', {
      corsPreflight: {
        allowOrigins: corsPolicy.allowOrigins,
        allowMethods: corsPolicy.allowMethods.map((m) => m as CorsHttpMethod),
        allowHeaders: corsPolicy.allowHeaders,
        exposeHeaders: corsPolicy.exposeHeaders,
        maxAge: Duration.seconds(corsPolicy.maxAgeSeconds),
      },
    });
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: accessLogRetentionDays as logs.RetentionDays, removalPolicy: RemovalPolicy.RETAIN });
    const stage = api.defaultStage!.node.defaultChild as CfnStage;
    stage.defaultRouteSettings = { throttlingRateLimit: stageThrottle.rateLimit, throttlingBurstLimit: stageThrottle.burstLimit };
    stage.routeSettings = Object.fromEntries(
      routes.flatMap((r) => {
        const throttle = routeThrottle(r.id);
        // RouteSettings is untyped JSON in CDK: CloudFormation's own (PascalCase) property names.
        return throttle ? [[`${r.method} ${r.path}`, { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit }]] : [];
      }),
    );
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId', ip: '$context.identity.sourceIp', requestTime: '$context.requestTime', routeKey: '$context.routeKey',
        status: '$context.status', responseLength: '$context.responseLength', latencyMs: '$context.responseLatency',
        integrationLatencyMs: '$context.integrationLatency', integrationError: '$context.integrationErrorMessage', userAgent: '$context.identity.userAgent',
      }),
    };
    return api;
  }

  /** What every function may be granted and the environment they all get. */
  private resources(table: dynamodb.TableV2, importsBucket: s3.Bucket, eventsBucket: s3.Bucket, api: HttpApi, mailFrom: string): ServiceResources {
    const logLevel = new CfnParameter(this, 'LogLevel', { type: 'String', default: 'INFO', allowedValues: ['DEBUG', 'INFO', 'WARN', 'ERROR'], description: 'Log level of every function' });
    return {
      table,
      imports: importsBucket,
      events: eventsBucket,
      environment: {
        TABLE_NAME: table.tableName,
        IMPORTS_BUCKET: importsBucket.bucketName,
        EVENTS_BUCKET: eventsBucket.bucketName,
        PUBLIC_BASE_URL: api.apiEndpoint,
        MAIL_FROM: mailFrom,
        POWERTOOLS_LOG_LEVEL: logLevel.valueAsString,
      },
      // The sending identity: the address itself or its domain, whichever is verified in SES.
      mailIdentityArns: [
        `arn:${Aws.PARTITION}:ses:${Aws.REGION}:${Aws.ACCOUNT_ID}:identity/${mailFrom}`,
        `arn:${Aws.PARTITION}:ses:${Aws.REGION}:${Aws.ACCOUNT_ID}:identity/${Fn.select(1, Fn.split('@', mailFrom))}`,
      ],
    };
  }

  /** Page views: POST /v1/track sends one message per view to this queue; the job with the `trackingQueue` trigger consumes them in batches. */
  private trackingQueue(): TriggerTargets['tracking'] {
    const job = jobList.find((j) => 'trackingQueue' in j.trigger);
    if (!job || !('trackingQueue' in job.trigger)) return undefined;
    const { maxBatchingWindowSeconds, maxReceiveCount } = job.trigger.trackingQueue;
    const deadLetters = this.deadLetterQueue(`${job.id}DeadLetters`);
    const queue = this.retainedQueue('TrackingQueue', {
      retentionPeriod: Duration.days(4),
      // AWS: at least six times the function timeout plus the batching window.
      visibilityTimeout: Duration.seconds(6 * (job.timeoutSeconds ?? 900) + maxBatchingWindowSeconds),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount },
    });
    return { queue, deadLetters };
  }

  /**
   * Webhook deliveries: the fan-out job sends one message per webhook and write, the delivery job consumes them
   * and sends retries back with a delay; after the last retry (or maxReceiveCount receives) they go to the
   * dead-letter queue, alarmed.
   */
  private webhookQueue(): TriggerTargets['webhooks'] {
    const job = jobList.find((j) => 'webhookDeliveries' in j.trigger);
    if (!job || !('webhookDeliveries' in job.trigger)) return undefined;
    const { maxBatchingWindowSeconds, maxReceiveCount } = job.trigger.webhookDeliveries;
    const deadLetters = this.deadLetterQueue('WebhookDeadLetters');
    const queue = this.retainedQueue('WebhookQueue', {
      // A retry waits up to 10 hours in hops of at most 15 minutes: messages live for days.
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(6 * (job.timeoutSeconds ?? 900) + maxBatchingWindowSeconds),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount },
    });
    return { queue, deadLetters };
  }

  /** The change feed: the events bucket notifies a queue of each raw event object; the job reads those of subscriber changes. */
  private changeConsumer(job: Job, fn: ServiceFunction, trigger: TriggerOf<'eventChanges'>, eventsBucket: s3.Bucket): void {
    const { batchSize, maxBatchingWindowSeconds, maxConcurrency, maxReceiveCount } = trigger.eventChanges;
    const deadLetters = this.deadLetterQueue(`${job.id}DeadLetters`);
    const queue = this.retainedQueue('ChangeQueue', {
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(6 * (job.timeoutSeconds ?? 900) + maxBatchingWindowSeconds),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount },
    });
    this.changeQueue = queue;
    eventsBucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.SqsDestination(queue), { prefix: 'raw/' });
    nagOk(fn, 'Serverless::Serverless-LambdaEventSourceMappingDestination', 'Failed messages go to the queue\'s own dead-letter queue (redrive policy) after maxReceiveCount.');
    fn.addEventSource(new lambdaEvents.SqsEventSource(queue, { batchSize, maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds), maxConcurrency, reportBatchItemFailures: true }));
  }

  /** The webhook delivery job: batches from the delivery queue, partial batch responses. */
  private webhookConsumer(fn: ServiceFunction, trigger: TriggerOf<'webhookDeliveries'>, webhooks: NonNullable<TriggerTargets['webhooks']>): void {
    const { batchSize, maxBatchingWindowSeconds, maxConcurrency } = trigger.webhookDeliveries;
    nagOk(fn, 'Serverless::Serverless-LambdaEventSourceMappingDestination', 'Failed messages go to the queue\'s own dead-letter queue (redrive policy) after maxReceiveCount; deliveries whose retries are over are sent there too.');
    fn.addEventSource(new lambdaEvents.SqsEventSource(webhooks.queue, { batchSize, maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds), maxConcurrency, reportBatchItemFailures: true }));
  }

  /** A route's function and integration (in `scope`, a nested stack of route functions) and its API route (here, on the API). */
  private routeFunction(scope: Construct, api: HttpApi, route: RouteRow, resources: ServiceResources, releases: CanaryReleases): ServiceFunction {
    const fn = new ServiceFunction(scope, route.id, {
      entry: route.handler,
      access: route.access,
      resources,
      timeoutSeconds: route.lambda?.timeoutSeconds,
      memoryMb: route.lambda?.memoryMb,
      reservedConcurrency: reservedConcurrencyOf(route.id),
      assets: route.assets,
    });
    // The integration and the permission to invoke the alias sit beside the function, in its nested stack.
    const alias = releases.release(route.id, fn);
    const integration = new CfnIntegration(scope, `${route.id}Integration`, { apiId: api.apiId, integrationType: 'AWS_PROXY', integrationUri: alias.functionArn, payloadFormatVersion: '2.0' });
    alias.addPermission(`${route.id}Invoke`, { principal: new iam.ServicePrincipal('apigateway.amazonaws.com'), sourceArn: api.arnForExecuteApi('*', route.path) });
    // The route stays here, where `api.addRoutes` put it (same construct path, so the same logical id): an API's route
    // keys are unique, and a route created in a nested stack while the old one waits for the clean-up would fail the deploy.
    new CfnRoute(new Construct(api, `${route.method}${route.path}`), 'Resource', {
      apiId: api.apiId,
      routeKey: `${route.method} ${route.path}`,
      authorizationType: 'NONE',
      target: Fn.join('', ['integrations/', integration.ref]),
    });
    return fn;
  }

  /** Connects a job's function to its trigger (a failure job is connected once every job has its function: attachFailureJobs). */
  private attachTrigger(job: Job, fn: ServiceFunction, where: TriggerTargets): void {
    const trigger = job.trigger;
    if ('schedule' in trigger) this.scheduled(job, fn, trigger);
    else if ('importsUpload' in trigger) where.importsBucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.LambdaDestination(fn), { prefix: trigger.importsUpload });
    else if ('trackingQueue' in trigger) this.pageViewConsumer(job, fn, trigger, where.tracking!);
    else if ('sesEventsQueue' in trigger) this.sesEventsConsumer(job, fn, trigger);
    else if ('eventChanges' in trigger) this.changeConsumer(job, fn, trigger, where.eventsBucket!);
    else if ('webhookDeliveries' in trigger) this.webhookConsumer(fn, trigger, where.webhooks!);
    else if ('tableStream' in trigger) this.streamConsumer(job, fn, trigger, where.table);
  }

  /** The table stream's consumer: its subscriber records (a filter on the sort key), one batch per shard at a time. */
  private streamConsumer(job: Job, fn: ServiceFunction, trigger: TriggerOf<'tableStream'>, table: dynamodb.TableV2): void {
    const { keyPrefix, batchSize, maxBatchingWindowSeconds, maxRetryAttempts } = trigger.tableStream;
    const failed = this.deadLetterQueue(`${job.id}Failed`);
    fn.addEventSource(
      new lambdaEvents.DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize,
        maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds),
        retryAttempts: maxRetryAttempts,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        onFailure: new lambdaEvents.SqsDlq(failed),
        filters: [lambda.FilterCriteria.filter({ dynamodb: { Keys: { sk: { S: lambda.FilterRule.beginsWith(keyPrefix) } } } })],
      }),
    );
    this.streamFunction = fn;
  }

  /** A scheduled job: a run that fails all its attempts (or cannot be delivered) lands in a queue with an alarm. */
  private scheduled(job: Job, fn: ServiceFunction, trigger: TriggerOf<'schedule'>): void {
    const failed = this.deadLetterQueue(`${job.id}FailedRuns`);
    fn.configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(failed) });
    new events.Rule(this, `${job.id}Schedule`, {
      schedule: events.Schedule.expression(trigger.schedule),
      targets: [new targets.LambdaFunction(fn, { deadLetterQueue: failed, retryAttempts: 2 })],
    });
  }

  /** The page-view consumer: batches from the tracking queue, partial batch responses. */
  private pageViewConsumer(job: Job, fn: ServiceFunction, trigger: TriggerOf<'trackingQueue'>, tracking: NonNullable<TriggerTargets['tracking']>): void {
    const { batchSize, maxBatchingWindowSeconds, maxConcurrency } = trigger.trackingQueue;
    nagOk(fn, 'Serverless::Serverless-LambdaEventSourceMappingDestination', 'Failed messages go to the queue\'s own dead-letter queue (redrive policy) after maxReceiveCount.');
    fn.addEventSource(
      new lambdaEvents.SqsEventSource(tracking.queue, {
        batchSize,
        maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds),
        maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    new CfnOutput(this, `${job.id}DeadLetterQueueUrl`, { value: tracking.deadLetters.queueUrl, description: 'Page views that failed repeatedly' });
  }

  /** SES delivery events: SNS → SQS → batches, one raw object per batch instead of one per notification. */
  private sesEventsConsumer(job: Job, fn: ServiceFunction, trigger: TriggerOf<'sesEventsQueue'>): void {
    const { batchSize, maxBatchingWindowSeconds, maxReceiveCount } = trigger.sesEventsQueue;
    const topic = this.sesEventsTopic();
    const deadLetters = this.deadLetterQueue(`${job.id}DeadLetters`);
    // Notifications SNS could not deliver to the queue (a deleted or misconfigured queue).
    const undelivered = this.deadLetterQueue(`${job.id}Undelivered`);
    const queue = this.retainedQueue(`${job.id}Queue`, {
      retentionPeriod: Duration.days(4),
      // AWS: at least six times the function timeout plus the batching window.
      visibilityTimeout: Duration.seconds(6 * (job.timeoutSeconds ?? 900) + maxBatchingWindowSeconds),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount },
    });
    topic.addSubscription(new subs.SqsSubscription(queue, { deadLetterQueue: undelivered }));
    nagOk(fn, 'Serverless::Serverless-LambdaEventSourceMappingDestination', 'Failed messages go to the queue\'s own dead-letter queue (redrive policy) after maxReceiveCount.');
    fn.addEventSource(
      new lambdaEvents.SqsEventSource(queue, {
        batchSize,
        maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds),
        reportBatchItemFailures: true,
      }),
    );
    new CfnOutput(this, `${job.id}DeadLetterQueueUrl`, { value: deadLetters.queueUrl, description: 'SES notifications that failed repeatedly' });
  }

  /** The topic SES event destinations publish to, on behalf of this account only. */
  private sesEventsTopic(): sns.Topic {
    if (this.sesTopic) return this.sesTopic;
    const topic = (this.sesTopic = new sns.Topic(this, 'SesEvents', { enforceSSL: true, masterKey: this.topicKey }));
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { StringEquals: { 'AWS:SourceAccount': this.account } },
      }),
    );
    return topic;
  }

  /** A job whose async invocations fail every attempt hands the event to its failure job. */
  private attachFailureJobs(jobFunctions: Record<JobId, ServiceFunction>): void {
    for (const job of jobList) {
      if (!('asyncFailureOf' in job.trigger)) continue;
      const target = jobFunctions[job.trigger.asyncFailureOf as JobId];
      if (!target) throw new Error(`job ${job.id}: no job ${job.trigger.asyncFailureOf}`);
      const failureOf = job.trigger.asyncFailureOf;
      const targetJob = jobList.find((j) => j.id === failureOf);
      target.configureAsyncInvoke({ retryAttempts: 2, onFailure: new LambdaDestination(jobFunctions[job.id], { responseOnly: false }), onSuccess: this.successDestination(targetJob) });
      // If marking the files failed fails too, the event waits in a queue with an alarm.
      const lost = this.deadLetterQueue(`${job.id}FailedRuns`);
      jobFunctions[job.id].configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(lost), onSuccess: this.successDestination(job) });
    }
  }

  /** Where a job's successful async invocations go: the change queue for `successTo: 'changes'` (import.finished). */
  private successDestination(job: Job | undefined): SqsDestination | undefined {
    if (job?.successTo !== 'changes') return undefined;
    if (!this.changeQueue) throw new Error(`job ${job.id}: successTo changes without a job with an eventChanges trigger`);
    return new SqsDestination(this.changeQueue);
  }

  /** The sender of opt-in emails, asked at deploy time when the app does not set MAIL_FROM: a deploy without one fails early. */
  private mailFromParameter(): string {
    return new CfnParameter(this, 'MailFrom', {
      type: 'String',
      description: 'Sender address of opt-in emails (a verified SES identity)',
      allowedPattern: '^[^@\\s]+@[^@\\s]+$',
      constraintDescription: 'an email address',
    }).valueAsString;
  }
}
