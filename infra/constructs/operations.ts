import { CfnCondition, CfnParameter, Duration, Fn, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../shared/observability/names.js';

export interface OperationsProps {
  api: HttpApi;
  table: ITableV2;
  functions: Array<{ id: string; fn: IFunction }>;
  deadLetterQueues: IQueue[];
  topicKey: IKey;
  /** The page-view queue: alarmed when its oldest message waits too long (the consumer is behind). */
  trackingQueue?: IQueue;
  /** The table stream's consumer: alarmed when its records wait too long (counts and events lag behind). */
  streamConsumer?: IFunction;
}

const FIVE_MINUTES = Duration.minutes(5);
/** CloudWatch's limit of alarms in one alarm status widget. */
const ALARMS_PER_WIDGET = 100;

/**
 * What an operator watches: the alarm topic (with an optional email
 * subscription from the `AlarmEmail` deploy parameter), the alarms of the
 * runbook in docs/operations.md, and one dashboard. The alarms and the
 * dashboard live in a nested stack (`alarmsStack`), except the two alarms of
 * each function that lives in a nested stack of route functions: those are
 * beside their function (docs/architecture.md, "Stack layout": CloudFormation's
 * 500 resources per template).
 */
export class Operations extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly alarms: cw.Alarm[] = [];
  /** Each function's errors alarm, by route or job id (a release of an API function is rolled back by it: canary.ts). */
  readonly functionErrorAlarms = new Map<string, cw.Alarm>();
  /** The nested stack that holds the alarms and the dashboard. */
  readonly alarmsStack: NestedStack;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const { api, table, functions, deadLetterQueues } = props;
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { enforceSSL: true, masterKey: props.topicKey, displayName: 'Newsletter service alarms' });
    const email = new CfnParameter(this, 'AlarmEmail', { type: 'String', default: '', description: 'Address notified of every alarm (empty: no email subscription)' });
    const subscription = new sns.CfnSubscription(this, 'AlarmEmailSubscription', { topicArn: this.alarmTopic.topicArn, protocol: 'email', endpoint: email.valueAsString });
    Validations.of(subscription).acknowledge({ id: 'Serverless::Serverless-SNSRedrivePolicy', reason: 'An email subscription: SNS retries email itself and a DLQ of undelivered alarm emails would have no reader.' });
    subscription.cfnOptions.condition = new CfnCondition(this, 'HasAlarmEmail', { expression: Fn.conditionNot(Fn.conditionEquals(email.valueAsString, '')) });
    const alarmsStack = (this.alarmsStack = new NestedStack(this, 'Alarms', { description: 'Alarms and dashboard of the newsletter service (docs/operations.md "Alarms")' }));

    /** One alarm; `runbook` is its heading's anchor in docs/operations.md ("Alarms"). */
    /** Alarms the dashboard lists: those of the alarms stack, and the others by name (a reference would be a parameter of this stack each). */
    const listed: cw.IAlarm[] = [];
    const alarm = (name: string, runbook: string, description: string, metric: cw.IMetric, threshold: number, evaluationPeriods = 1, scope: Construct = alarmsStack) => {
      // An alarm of another nested stack is named, so the dashboard can list it by an ARN of its own making.
      const alarmName = scope === alarmsStack ? undefined : `${Stack.of(this).stackName}-${name}`;
      const a = new cw.Alarm(scope, name, {
        alarmName,
        alarmDescription: `${description} Runbook: docs/operations.md#${runbook}`,
        metric,
        threshold,
        evaluationPeriods,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(new SnsAction(this.alarmTopic));
      a.addOkAction(new SnsAction(this.alarmTopic));
      this.alarms.push(a);
      listed.push(alarmName ? cw.Alarm.fromAlarmName(alarmsStack, `${name}Listed`, alarmName) : a);
      return a;
    };

    const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    // Percent of requests answered 5xx; quiet periods (under 20 requests) do not count.
    const errorRate = new cw.MathExpression({ expression: 'IF(requests >= 20, 100 * errors / requests, 0)', usingMetrics: { requests, errors: serverErrors }, period: FIVE_MINUTES, label: 'API 5xx %' });
    alarm('Api5xxRate', 'api-5xx-rate', 'More than 1% of API requests answered 5xx in 5 minutes.', errorRate, 1);

    for (const { id: fnId, fn } of functions) {
      // A function of a nested stack of its own (the API's route functions: service-stack.ts) has its alarms there: its
      // deployment group names the errors alarm, and this nested stack reading the function while that one read the
      // alarm would be a cycle between the two.
      const own = Stack.of(fn);
      const scope = NestedStack.isNestedStack(own) && own !== alarmsStack ? own : alarmsStack;
      // One-minute periods (as sensitive as five: any error alarms), so the alarm can stop a five-minute canary release in time.
      const errors = alarm(`${fnId}Errors`, 'function-errors', `Function ${fnId} failed (crash, timeout or a job run that threw); rolls back a release in progress.`, fn.metricErrors({ period: Duration.minutes(1), statistic: 'Sum' }), 1, 1, scope);
      this.functionErrorAlarms.set(fnId, errors);
      alarm(`${fnId}Throttles`, 'function-throttles', `Function ${fnId} was throttled (its reserved concurrency or the account limit).`, fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), 1, 1, scope);
    }
    for (const queue of deadLetterQueues) {
      const name = queue.node.id;
      alarm(`${name}NotEmpty`, 'dead-letter-queue-not-empty', `A message waits in the dead-letter queue ${name}.`, queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }), 1);
    }
    const custom = (metricName: string, dimensionsMap: Record<string, string>) =>
      new cw.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: SERVICE_NAME, ...dimensionsMap }, period: FIVE_MINUTES, statistic: 'Sum' });
    if (props.trackingQueue) {
      // Normally a view waits the batching window (5 s) plus one batch; 5 minutes means the consumer is failing or far behind.
      alarm('TrackingQueueBehind', 'tracking-queue-behind', 'The oldest page view in the tracking queue waited more than 5 minutes (recommendations lag behind; views are kept 4 days).', props.trackingQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }), 300, 3);
      alarm('PageViewEffectsLost', 'page-view-effects-lost', 'Reader, co-visit or fresh-list writes of counted page views failed after their retries.', custom('PageViewEffectsLost', { job: 'trackingViews' }), 1);
    }
    if (props.streamConsumer) {
      // Normally a record waits the batching window plus one batch: seconds. Records are kept 24 hours.
      const age = new cw.Metric({ namespace: 'AWS/Lambda', metricName: 'IteratorAge', dimensionsMap: { FunctionName: props.streamConsumer.functionName }, period: Duration.minutes(1), statistic: 'Maximum' });
      alarm('SubscriberStreamBehind', 'subscriber-stream-behind', 'The table stream consumer is more than 5 minutes behind (counts, statistics and subscriber events lag; records are kept 24 hours).', age, 300_000, 3);
    }
    // Imports the service gave up on (not files refused for their content): the worker after stalled runs, or its failure job.
    const importsFailed = new cw.MathExpression({
      expression: 'worker + failureJob',
      usingMetrics: { worker: custom('ImportsFailed', { job: 'importsWorker' }), failureJob: custom('ImportsFailed', { job: 'importsWorkerFailed' }) },
      period: FIVE_MINUTES,
      label: 'imports failed',
    });
    alarm('ImportsFailed', 'imports-failed', 'The service gave up on an import (the file says failed, with a cause).', importsFailed, 1);
    // A catalogue feed that failed three polls in half an hour (polls run every 10 minutes): the catalogue is stale.
    const feedFailures = new cw.Metric({ namespace: METRICS_NAMESPACE, metricName: 'CatalogueFeedFailures', dimensionsMap: { service: SERVICE_NAME, job: 'catalogueFeeds' }, period: Duration.minutes(30), statistic: 'Sum' });
    alarm('CatalogueFeedFailing', 'catalogue-feed-failing', "Catalogue feed polls failed 3 times in 30 minutes (the catalogue keeps its last good articles; admin show-client says why).", feedFailures, 3);
    const throttled = (metricName: string) => new cw.Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap: { TableName: table.tableName }, period: FIVE_MINUTES, statistic: 'Sum' });
    alarm(
      'TableThrottles',
      'table-throttles',
      'DynamoDB throttled requests on the table (a hot partition or the on-demand table limit).',
      new cw.MathExpression({ expression: 'reads + writes', usingMetrics: { reads: throttled('ReadThrottleEvents'), writes: throttled('WriteThrottleEvents') }, period: FIVE_MINUTES, label: 'throttle events' }),
      10,
    );

    // The service's own metrics, summed over the routes and jobs that emit them.
    const total = (metricName: string) =>
      new cw.MathExpression({ expression: `SUM(SEARCH('{${METRICS_NAMESPACE},service,route} MetricName="${metricName}" OR {${METRICS_NAMESPACE},service,job} MetricName="${metricName}"', 'Sum', 300))`, label: metricName, period: FIVE_MINUTES });
    const graph = (title: string, left: cw.IMetric[]) => new cw.GraphWidget({ title, left, width: 8, height: 6 });
    new cw.Dashboard(alarmsStack, 'Dashboard', {
      widgets: [
        [
          graph('API requests and errors', [requests, api.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum' }), serverErrors]),
          graph('API latency (p99)', [api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' })]),
          graph('4xx / 5xx answered by the functions', [total('ClientErrors'), total('ServerErrors')]),
        ],
        [
          graph('Subscribers and imports', [total('SubscribersApplied'), total('ImportLinesApplied'), total('ImportLinesFailed'), total('ImportsFailed')]),
          graph('Events and opt-ins', [total('EventsRecorded'), total('OptinsSubmitted'), total('OptinsConfirmed'), total('OptinRemindersSent')]),
          graph('Recommendations', [total('RecommendationsServed'), total('RecommendationsFromPopularity'), total('CatalogueArticlesUpserted'), total('CatalogueFeedFailures')]),
        ],
        [
          graph('DynamoDB throttles', [throttled('ReadThrottleEvents'), throttled('WriteThrottleEvents')]),
          graph('Dead-letter queues', deadLetterQueues.map((q) => q.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum', label: q.node.id }))),
          new cw.AlarmStatusWidget({ title: 'Alarms', alarms: listed.slice(0, ALARMS_PER_WIDGET), width: 8, height: 6 }),
        ],
        // An alarm status widget lists at most 100 alarms: the rest in more of them.
        Array.from({ length: Math.ceil(listed.length / ALARMS_PER_WIDGET) - 1 }, (_, i) =>
          new cw.AlarmStatusWidget({ title: `Alarms (${i + 2})`, alarms: listed.slice((i + 1) * ALARMS_PER_WIDGET, (i + 2) * ALARMS_PER_WIDGET), width: 8, height: 6 }),
        ),
      ],
    });
  }
}
