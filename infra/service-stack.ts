import { CfnOutput, CfnParameter, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { LambdaDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import * as lambdaEvents from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { tableDefinition } from '../shared/db/table.js';
import { corsPolicy } from '../shared/http/cors.js';
import { jobList } from '../shared/jobs.js';
import { fallbackHandler, routeList } from '../shared/routes.js';
import { ServiceFunction, type ServiceResources } from './constructs/service-function.js';

export interface ServiceStackProps extends StackProps {
  /** Sender address of opt-in emails (a verified SES identity). */
  mailFrom?: string;
}

/** The whole service: one table, two buckets, the HTTP API with one function per route, and the jobs. */
export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);
    const { partitionKey, sortKey, ttlAttribute, globalIndexes } = tableDefinition;
    const str = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
    const table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: str(partitionKey),
      sortKey: str(sortKey),
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: ttlAttribute,
      globalSecondaryIndexes: globalIndexes.map((g) => ({ indexName: g.name, partitionKey: str(g.partitionKey), sortKey: str(g.sortKey) })),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const bucket = (name: string, expireDays?: number) =>
      new s3.Bucket(this, name, {
        encryption: s3.BucketEncryption.S3_MANAGED,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        removalPolicy: RemovalPolicy.RETAIN,
        lifecycleRules: [
          { abortIncompleteMultipartUploadAfter: Duration.days(1) },
          ...(expireDays ? [{ expiration: Duration.days(expireDays) }] : []),
        ],
      });
    const importsBucket = bucket('Imports', 90);
    const eventsBucket = bucket('Events');
    // Merge runs of an assembly that crashed, and running files of open days (rebuilt on demand).
    eventsBucket.addLifecycleRule({ prefix: 'tmp/', expiration: Duration.days(2) });
    eventsBucket.addLifecycleRule({ prefix: 'partial/', expiration: Duration.days(7) });

    const api = new HttpApi(this, 'Api', {
      corsPreflight: {
        allowOrigins: corsPolicy.allowOrigins,
        allowMethods: corsPolicy.allowMethods.map((m) => m as CorsHttpMethod),
        allowHeaders: corsPolicy.allowHeaders,
        exposeHeaders: corsPolicy.exposeHeaders,
        maxAge: Duration.seconds(corsPolicy.maxAgeSeconds),
      },
    });
    const resources: ServiceResources = {
      table,
      imports: importsBucket,
      events: eventsBucket,
      environment: {
        TABLE_NAME: table.tableName,
        IMPORTS_BUCKET: importsBucket.bucketName,
        EVENTS_BUCKET: eventsBucket.bucketName,
        PUBLIC_BASE_URL: api.apiEndpoint,
        MAIL_FROM: props.mailFrom ?? this.mailFromParameter(),
      },
    };

    for (const route of routeList) {
      const fn = new ServiceFunction(this, route.id, {
        entry: route.handler,
        access: route.access,
        resources,
        timeoutSeconds: route.lambda?.timeoutSeconds,
        memoryMb: route.lambda?.memoryMb,
        assets: route.assets,
      });
      api.addRoutes({ path: route.path, methods: [route.method as HttpMethod], integration: new HttpLambdaIntegration(`${route.id}Integration`, fn) });
    }
    const fallback = new ServiceFunction(this, 'fallback', { entry: fallbackHandler, access: {}, resources });
    // API Gateway's `$default` route: whatever no row matches (also `/`) gets the service's JSON 404/405.
    new HttpRoute(this, 'DefaultRoute', { httpApi: api, routeKey: HttpRouteKey.DEFAULT, integration: new HttpLambdaIntegration('fallbackIntegration', fallback) });

    let sesTopic: sns.Topic | undefined;
    const jobFunctions: Record<string, ServiceFunction> = {};
    for (const job of jobList) {
      const fn = (jobFunctions[job.id] = new ServiceFunction(this, job.id, {
        entry: job.handler,
        access: job.access,
        resources,
        timeoutSeconds: job.timeoutSeconds ?? 900,
        memoryMb: job.memoryMb,
      }));
      const trigger = job.trigger;
      if ('schedule' in trigger) {
        new events.Rule(this, `${job.id}Schedule`, { schedule: events.Schedule.expression(trigger.schedule), targets: [new targets.LambdaFunction(fn)] });
      } else if ('importsUpload' in trigger) {
        importsBucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.LambdaDestination(fn), { prefix: trigger.importsUpload });
      } else if ('asyncFailureOf' in trigger) {
        continue;
      } else {
        // SNS → SQS → batches: one raw object per batch instead of one per notification.
        const { batchSize, maxBatchingWindowSeconds, maxReceiveCount } = trigger.sesEventsQueue;
        if (!sesTopic) {
          sesTopic = new sns.Topic(this, 'SesEvents', { enforceSSL: true });
          // SES event destinations publish to the topic on behalf of this account only.
          sesTopic.addToResourcePolicy(
            new iam.PolicyStatement({
              principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
              actions: ['sns:Publish'],
              resources: [sesTopic.topicArn],
              conditions: { StringEquals: { 'AWS:SourceAccount': this.account } },
            }),
          );
        }
        const deadLetters = new sqs.Queue(this, `${job.id}DeadLetters`, {
          encryption: sqs.QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
          retentionPeriod: Duration.days(14),
        });
        const queue = new sqs.Queue(this, `${job.id}Queue`, {
          encryption: sqs.QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
          retentionPeriod: Duration.days(4),
          // AWS: at least six times the function timeout plus the batching window.
          visibilityTimeout: Duration.seconds(6 * (job.timeoutSeconds ?? 900) + maxBatchingWindowSeconds),
          deadLetterQueue: { queue: deadLetters, maxReceiveCount },
        });
        sesTopic.addSubscription(new subs.SqsSubscription(queue));
        fn.addEventSource(
          new lambdaEvents.SqsEventSource(queue, {
            batchSize,
            maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds),
            reportBatchItemFailures: true,
          }),
        );
        new CfnOutput(this, `${job.id}DeadLetterQueueUrl`, { value: deadLetters.queueUrl, description: 'SES notifications that failed repeatedly' });
      }
    }

    // A job whose async invocations fail every attempt hands the event to its failure job.
    for (const job of jobList) {
      if (!('asyncFailureOf' in job.trigger)) continue;
      const target = jobFunctions[job.trigger.asyncFailureOf];
      if (!target) throw new Error(`job ${job.id}: no job ${job.trigger.asyncFailureOf}`);
      target.configureAsyncInvoke({ retryAttempts: 2, onFailure: new LambdaDestination(jobFunctions[job.id], { responseOnly: false }) });
    }

    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    for (const job of jobList) {
      new CfnOutput(this, `${job.id}FunctionName`, { value: jobFunctions[job.id].functionName, description: `Run by hand: aws lambda invoke --function-name <this> --payload '{}' out.json` });
    }
    new CfnOutput(this, 'TableName', { value: table.tableName });
    if (sesTopic) new CfnOutput(this, 'SesEventsTopicArn', { value: sesTopic.topicArn, description: 'Point the SES configuration set event destination here' });
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
