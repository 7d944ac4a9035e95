/**
 * `npm run bench:tracer`: what the Powertools Tracer costs where it is off
 * (outside Lambda: the local gateway, the tests). The one middy stack's
 * observability middlewares (shared/observability `observe`) run a trivial
 * handler with and without the Tracer's `captureLambdaHandler`, alternating,
 * in RUNS runs of N invocations each; then `traced()` around a trivial call
 * against the bare call. Prints medians per invocation. Also checks that a
 * captured SDK client is the client itself (no middleware added).
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
const { observe, traced, tracer } = await import('../shared/observability/index.js');

const N = Number(process.env.BENCH_INVOCATIONS ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const context = {
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench',
  memoryLimitInMB: '1024',
  awsRequestId: 'r',
  logGroupName: 'g',
  logStreamName: 's',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 30_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;
const event = { headers: {}, requestContext: { requestId: 'req' } };

function stack(withTracer: boolean) {
  const all = observe<typeof event, { statusCode: number }>('route', 'GET /bench');
  let s = middy<typeof event, { statusCode: number }>();
  for (const m of withTracer ? all : all.slice(1)) s = s.use(m);
  return s.handler(() => Promise.resolve({ statusCode: 200 }));
}

async function perInvocationUs(handler: (e: typeof event, c: Context) => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await handler(event, context);
  return Number(process.hrtime.bigint() - start) / 1000 / N;
}

function perCallNs(fn: () => number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < N * 50; i++) sink += fn();
  if (sink < 0) console.log(sink);
  return Number(process.hrtime.bigint() - start) / (N * 50);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (tracer.isTracingEnabled()) throw new Error('The Tracer is on (AWS_EXECUTION_ENV is set?): this measures it off, as it runs locally');
const client = new DynamoDBClient({ region: 'eu-west-1' });
if (tracer.captureAWSv3Client(client) !== client) throw new Error('a captured client is not the client itself');

const withT = stack(true);
const withoutT = stack(false);
await perInvocationUs(withT);
await perInvocationUs(withoutT);
const on: number[] = [];
const off: number[] = [];
const tracedNs: number[] = [];
const bareNs: number[] = [];
for (let run = 0; run < RUNS; run++) {
  on.push(await perInvocationUs(withT));
  off.push(await perInvocationUs(withoutT));
  tracedNs.push(perCallNs(() => traced('### bench', () => 1)));
  bareNs.push(perCallNs(() => 1));
}
console.log(`middy stack with captureLambdaHandler:    median ${median(on).toFixed(2)} µs per invocation (runs: ${on.map((x) => x.toFixed(2)).join(', ')})`);
console.log(`middy stack without it:                   median ${median(off).toFixed(2)} µs per invocation (runs: ${off.map((x) => x.toFixed(2)).join(', ')})`);
console.log(`difference:                               ${(median(on) - median(off)).toFixed(2)} µs per invocation`);
console.log(`traced() around a call: median ${median(tracedNs).toFixed(1)} ns, the bare call ${median(bareNs).toFixed(1)} ns`);
console.log(`captured SDK client: the same object (no middleware added); ${RUNS} runs of ${N} invocations, Node ${process.version}`);
