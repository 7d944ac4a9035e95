/**
 * `npm run bench:tracer`: what the Powertools Tracer costs where it does not
 * trace. Two kinds of process, alternating, RUNS of each:
 *
 * - **off**: as the service runs locally (`npm start`, the tests, the
 *   benchmarks: `AWS_EXECUTION_ENV` unset): shared/observability does not load
 *   the Tracer at all;
 * - **loaded**: `AWS_EXECUTION_ENV` set and `POWERTOOLS_TRACE_ENABLED=false`:
 *   the Tracer and the X-Ray SDK are loaded but trace nothing (what a process
 *   would pay if the Tracer were imported everywhere).
 *
 * Each process measures, after a warm-up, N invocations of the one middy
 * stack's observability middlewares around a trivial handler, and N
 * DynamoDB GetItem calls through a captured SDK client whose HTTP handler
 * answers at once (the SDK's own work: serialising, signing, parsing — the
 * calls that dominate a handler's CPU in the benchmarks' profiles), and
 * `traced()` around a trivial call. Prints the medians per invocation/call.
 * A child refuses to measure when tracing is on (no segment to trace into).
 */
import { spawnSync } from 'node:child_process';
import { Readable } from 'node:stream';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';

const N = Number(process.env.BENCH_INVOCATIONS ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface ChildResult {
  loaded: boolean;
  stackUs: number;
  getItemUs: number;
  tracedNs: number;
  observeLength: number;
}

async function child(): Promise<void> {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  const { observe, traced, captureClient, tracingEnabled } = await import('../shared/observability/index.js');
  const { DynamoDBClient, GetItemCommand } = await import('@aws-sdk/client-dynamodb');
  if (tracingEnabled()) throw new Error('tracing is on: this measures the Tracer where it does not trace');

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
  let s = middy<typeof event, { statusCode: number }>();
  for (const m of observe<typeof event, { statusCode: number }>('route', 'GET /bench')) s = s.use(m);
  const handler = s.handler(() => Promise.resolve({ statusCode: 200 }));

  const body = JSON.stringify({ Item: { pk: { S: 'CLIENT#a' }, sk: { S: 'LIST#b' }, name: { S: 'Weekly' }, subscribed: { N: '1204' } } });
  const client = captureClient(
    new DynamoDBClient({
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
      requestHandler: {
        handle: () =>
          Promise.resolve({
            response: { statusCode: 200, reason: 'OK', headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(body)]) },
          }),
      } as never,
    }),
  );
  const get = () => client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'CLIENT#a' }, sk: { S: 'LIST#b' } } }));

  const perUs = async (n: number, fn: () => Promise<unknown>) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn();
    return Number(process.hrtime.bigint() - start) / 1000 / n;
  };
  await perUs(N / 4, () => handler(event, context));
  await perUs(N / 20, get);
  const stackUs = await perUs(N, () => handler(event, context));
  const getItemUs = await perUs(N / 5, get);
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < N * 50; i++) sink += traced('### bench', () => 1);
  const tracedNs = Number(process.hrtime.bigint() - start) / (N * 50);
  if (sink < 0) console.log(sink);
  const out: ChildResult = { loaded: Boolean(process.env.AWS_EXECUTION_ENV), stackUs, getItemUs, tracedNs, observeLength: observe('route', 'x').length };
  console.log(JSON.stringify(out));
}

function run(loaded: boolean): ChildResult {
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_TRACER_CHILD: '1' };
  delete env.AWS_EXECUTION_ENV;
  if (loaded) Object.assign(env, { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'false' });
  const res = spawnSync(process.execPath, [...process.execArgv, process.argv[1]], { env, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`child (${loaded ? 'loaded' : 'off'}) failed: ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split('\n').pop()!) as ChildResult;
}

if (process.env.BENCH_TRACER_CHILD) {
  await child();
} else {
  const off: ChildResult[] = [];
  const loaded: ChildResult[] = [];
  for (let i = 0; i < RUNS; i++) {
    off.push(run(false));
    loaded.push(run(true));
  }
  const row = (name: string, rs: ChildResult[]) =>
    `${name.padEnd(8)} middy stack ${median(rs.map((r) => r.stackUs)).toFixed(2)} µs/invocation (${rs.map((r) => r.stackUs.toFixed(1)).join(', ')}); ` +
    `GetItem through the SDK ${median(rs.map((r) => r.getItemUs)).toFixed(1)} µs/call (${rs.map((r) => r.getItemUs.toFixed(0)).join(', ')}); ` +
    `traced() ${median(rs.map((r) => r.tracedNs)).toFixed(1)} ns; ${rs[0].observeLength} middlewares`;
  console.log(row('off', off));
  console.log(row('loaded', loaded));
  const ratio = (k: 'stackUs' | 'getItemUs') => median(loaded.map((r) => r[k])) / median(off.map((r) => r[k]));
  console.log(`loaded/off: middy stack ${ratio('stackUs').toFixed(2)}×, SDK call ${ratio('getItemUs').toFixed(2)}×; ${RUNS} runs of each, N = ${N}, Node ${process.version}`);
}
