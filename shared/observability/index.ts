/**
 * The service's one Logger, Metrics and Tracer (Powertools) and the middlewares that attach them to an invocation.
 * Outside Lambda (`AWS_EXECUTION_ENV` unset) the Tracer is not loaded (./xray.ts says why) and tracing is a no-op.
 * Responses are never put into traces.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { METRICS_NAMESPACE, SERVICE_NAME } from './names.js';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME });

/**
 * The Tracer, in Lambda only (`AWS_EXECUTION_ENV` set, as the Tracer's own
 * rule; it still honours `POWERTOOLS_TRACE_ENABLED=false` there).
 */
const xray = process.env.AWS_EXECUTION_ENV ? await import('./xray.js') : undefined;

/** Whether this process traces (in Lambda, unless turned off). */
export const tracingEnabled = (): boolean => xray?.tracer.isTracingEnabled() ?? false;

/** `client` with a subsegment per call when this process traces; else `client` itself. */
export function captureClient<T>(client: T): T {
  return xray ? xray.tracer.captureAWSv3Client(client) : client;
}

/**
 * Runs `fn` inside an X-Ray subsegment named `name` (when tracing is on; else
 * just runs it): a bulk write chunk, the ranking. An error is recorded on the
 * subsegment and rethrown.
 */
export function traced<T>(name: string, fn: () => T): T {
  const parent = xray?.tracer.isTracingEnabled() ? xray.tracer.getSegment() : undefined;
  if (!parent) return fn();
  const subsegment = parent.addNewSubsegment(name);
  const end = (err?: unknown) => {
    if (err instanceof Error) subsegment.addError(err);
    subsegment.close();
  };
  try {
    const out = fn();
    if (out instanceof Promise) {
      return out.then(
        (value: unknown) => {
          end();
          return value;
        },
        (err: unknown) => {
          end(err);
          throw err;
        },
      ) as T;
    }
    end();
    return out;
  } catch (err) {
    end(err);
    throw err;
  }
}

/** Metric warnings go through the logger; "no metrics in this invocation" is the normal case for most requests, not a warning. */
const metricsLogger = {
  debug: (...a: unknown[]) => logger.debug(String(a[0])),
  info: (...a: unknown[]) => logger.info(String(a[0])),
  warn: (...a: unknown[]) => (String(a[0]).startsWith('No application metrics') ? undefined : logger.warn(String(a[0]))),
  error: (...a: unknown[]) => logger.error(String(a[0])),
};

function newMetrics(): Metrics {
  return new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME,
    logger: metricsLogger,
  });
}

/**
 * The metrics of the running invocation: a fresh instance per invocation, given its route or job dimension once
 * (one shared instance re-added it on every invocation, a Powertools warning each time several ran in one process).
 * Lambda runs one invocation per process; the local runtime runs many at once, so there a count may land in a
 * concurrent invocation's metrics (off locally unless POWERTOOLS_METRICS_DISABLED=false).
 */
let current = newMetrics();

/** The metrics an operator watches (CloudWatch EMF, namespace `NewsletterService`, dimensions `service` and `route` or `job`). */
export type MetricName =
  | 'SubscribersApplied'
  | 'SubscriberChangesCounted'
  | 'ImportLinesApplied'
  | 'ImportLinesFailed'
  | 'ImportsFailed'
  | 'EventsRecorded'
  | 'ChangeEventsPublished'
  | 'WebhooksDelivered'
  | 'WebhookDeliveryFailures'
  | 'WebhooksDeadLettered'
  | 'WebhookDeliveriesRequeued'
  | 'PageViewsCounted'
  | 'PageViewEffectsLost'
  | 'RecommendationsServed'
  | 'RecommendationsFromPopularity'
  | 'RecoCountsLost'
  | 'CatalogueArticlesUpserted'
  | 'CatalogueFeedFailures'
  | 'OptinsSubmitted'
  | 'OptinsConfirmed'
  | 'OptinRemindersSent'
  | 'ClientErrors'
  | 'ServerErrors'
  | 'JobFailures';

/** Adds `value` to a counter of this invocation (published when the invocation ends). */
export function count(name: MetricName, value = 1): void {
  if (value > 0) current.addMetric(name, MetricUnit.Count, value);
}

/**
 * A short stable hash of an email address (or another identifier that must
 * not be logged): the same address gives the same value, so lines can be
 * correlated without the address in the logs.
 */
export function hashForLog(value: string): string {
  return createHash('sha256').update(value.trim().toLowerCase()).digest('hex').slice(0, 16);
}

/** Adds keys to every following line of this invocation (e.g. the client once authenticated). */
export function addLogKeys(keys: Record<string, string | number | undefined>): void {
  const defined = Object.fromEntries(Object.entries(keys).filter(([, value]) => value !== undefined));
  logger.appendKeys(defined);
}

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The middlewares every invocation starts with: the Lambda context and the
 * route or job on every log line, a correlation id (the caller's
 * `x-correlation-id` when well formed, else the API Gateway request id or the
 * event's id), the route or job as the metric dimension, and metrics
 * published when the invocation ends (also after an error).
 */
export function observe<E, R>(kind: 'route' | 'job', name: string): middy.MiddlewareObj<E, R, Error, Context>[] {
  const publish = (request: middy.Request<E, R, Error, Context>) => {
    const own = (request.internal as { metrics?: Metrics }).metrics;
    own?.publishStoredMetrics();
  };
  return [
    ...(xray ? [xray.tracerMiddleware()] : []),
    injectLambdaContext(logger, { resetKeys: true }),
    {
      before: (request) => {
        const event = (request.event ?? {}) as {
          headers?: Record<string, string | undefined>;
          requestContext?: { requestId?: string };
          id?: string;
        };
        const given = event.headers?.['x-correlation-id'] ?? event.headers?.['X-Correlation-Id'];
        const correlationId = given && CORRELATION_ID.test(given) ? given : (event.requestContext?.requestId ?? event.id ?? request.context?.awsRequestId);
        logger.appendKeys({ [kind]: name });
        if (correlationId) logger.setCorrelationId(correlationId);
      },
    },
    {
      before: (request) => {
        current = newMetrics().addDimension(kind, name);
        (request.internal as { metrics?: Metrics }).metrics = current;
      },
      // Published when the invocation ends, also after an error (what Powertools' logMetrics middleware does).
      after: publish,
      onError: publish,
    },
  ];
}

/**
 * A job's Lambda entry: its function with the logger and metrics attached.
 * A run that throws is logged once with its stack, counted as `JobFailures`
 * and rethrown, so Lambda retries it and its failure destination receives it.
 */
export function jobHandler<E, R>(job: string, fn: (event: E, context: Context) => Promise<R>) {
  let stack = middy<E, R, Error, Context>();
  for (const m of observe<E, R>('job', job)) stack = stack.use(m);
  return stack
    .use({
      onError: (request) => {
        count('JobFailures');
        logger.error('job failed', request.error as Error);
      },
    })
    .handler(fn);
}
