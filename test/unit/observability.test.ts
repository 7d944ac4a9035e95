import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '../../shared/http/route.js';
import { captureOutput } from '../helpers/logs.js';
import type * as Observability from '../../shared/observability/index.js';

const route = {
  method: 'POST',
  path: '/v1/probe/{id}',
  handler: 'unused',
  auth: 'none',
  access: {},
  summary: 'probe',
  tags: [],
  request: { params: v.object({ id: v.pipe(v.string(), v.regex(/^\d+$/, 'must be digits')) }) },
  responses: {},
} as const satisfies RouteDef;

const context = (id: string) => ({ functionName: 'probe', awsRequestId: id, memoryLimitInMB: '512', invokedFunctionArn: 'arn:aws:lambda:local:0:function:probe' }) as Context;

function event(id: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /v1/probe/{id}',
    rawPath: `/v1/probe/${id}`,
    headers,
    pathParameters: { id },
    isBase64Encoded: false,
    requestContext: { requestId: 'apigw-req-1', http: { method: 'POST', path: `/v1/probe/${id}`, sourceIp: '127.0.0.1' } },
  } as unknown as APIGatewayProxyEventV2;
}

let obs: typeof Observability;
let probe: (e: APIGatewayProxyEventV2, c: Context) => Promise<{ statusCode?: number; body?: string }>;

beforeAll(async () => {
  // Metrics print EMF locally only when asked; the instance reads this when its module loads.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  obs = await import('../../shared/observability/index.js');
  const { httpHandler } = await import('../../shared/http/handler.js');
  const { json } = await import('../../shared/http/response.js');
  probe = httpHandler(route, ({ params }) => {
    obs.logger.info('probing', { subscriber: obs.hashForLog('Reader@Example.com') });
    obs.count('SubscribersApplied', 2);
    if (params.id === '500') throw new Error('database on fire for reader@example.com');
    return json(200, { ok: true });
  });
});

async function run(e: APIGatewayProxyEventV2, requestId: string) {
  const out = captureOutput();
  try {
    const res = await probe(e, context(requestId));
    return { res, lines: out.json(), text: out.text() };
  } finally {
    out.restore();
  }
}

describe('Powertools Logger and Metrics in the middy stack', () => {
  it('puts the request id, route and correlation id on every line, and hashes addresses', async () => {
    const { res, lines, text } = await run(event('1', { 'x-correlation-id': 'caller-abc-1' }), 'lambda-req-1');
    expect(res.statusCode).toBe(200);
    const logs = lines.filter((l) => l.message !== undefined);
    expect(logs.map((l) => l.message)).toEqual(['probing']);
    for (const line of logs) {
      expect(line).toMatchObject({ level: 'INFO', service: 'newsletter-service', function_request_id: 'lambda-req-1', route: 'POST /v1/probe/{id}', correlation_id: 'caller-abc-1' });
    }
    expect(logs[0].subscriber).toBe(obs.hashForLog('reader@example.com'));
    expect(text).not.toMatch(/@example\.com/i);
  });

  it('logs one error line with the stack for a 5xx, and takes the API Gateway request id as correlation id', async () => {
    const { res, lines } = await run(event('500'), 'lambda-req-2');
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('fire');
    const errors = lines.filter((l) => l.level === 'ERROR');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: 'request failed', status: 500, route: 'POST /v1/probe/{id}', correlation_id: 'apigw-req-1', function_request_id: 'lambda-req-2' });
    // A string in AWS, split in lines in dev mode.
    expect([errors[0].error?.stack].flat().join('\n')).toMatch(/database on fire[^]*at /);
  });

  it('keeps no keys of one request on the lines of the next', async () => {
    await run(event('1', { 'x-correlation-id': 'first' }), 'r-a');
    const { lines } = await run(event('1'), 'r-b');
    const logs = lines.filter((l) => l.message !== undefined);
    expect(logs[0]).toMatchObject({ correlation_id: 'apigw-req-1', function_request_id: 'r-b' });
  });

  it('emits EMF metrics with the route as the only dimension besides the service, 4xx and 5xx counted', async () => {
    const emf = async (e: APIGatewayProxyEventV2) => (await run(e, 'm')).lines.filter((l) => l._aws);
    const [ok] = await emf(event('1'));
    expect(ok).toMatchObject({ SubscribersApplied: 2, route: 'POST /v1/probe/{id}', service: 'newsletter-service' });
    expect(ok._aws!.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'NewsletterService', Dimensions: [expect.arrayContaining(['service', 'route'])] });
    expect(ok._aws!.CloudWatchMetrics[0].Dimensions[0]).toHaveLength(2);
    const [bad] = await emf(event('x'));
    expect(bad).toMatchObject({ ClientErrors: 1 });
    expect(bad.ServerErrors).toBeUndefined();
    const [failed] = await emf(event('500'));
    expect(failed).toMatchObject({ ServerErrors: 1, SubscribersApplied: 2 });
  });

  it('logs no Powertools warning during requests and job runs, one at a time or several at once, each published with its own dimension', async () => {
    const job = obs.jobHandler('probeJob', () => {
      obs.count('JobFailures', 0);
      obs.count('SubscribersApplied', 1);
      return Promise.resolve('done');
    });
    const out = captureOutput();
    try {
      await probe(event('1'), context('s-1'));
      await job({}, context('j-1'));
      await job({}, context('j-2'));
      await Promise.all([probe(event('1'), context('c-1')), probe(event('x'), context('c-2')), job({}, context('c-3')), job({}, context('c-4'))]);
    } finally {
      out.restore();
    }
    const lines = out.json();
    expect(lines.filter((l) => l.level === 'WARN' || l.level === 'ERROR')).toEqual([]);
    expect(out.text()).not.toMatch(/already been added|won't be added/);
    const emf = lines.filter((l) => l._aws);
    // One at a time (as in Lambda), each invocation is published with its own dimension only.
    expect(emf.slice(0, 3).map((l) => [l.route, l.job, l.SubscribersApplied])).toEqual([
      ['POST /v1/probe/{id}', undefined, 2],
      [undefined, 'probeJob', 1],
      [undefined, 'probeJob', 1],
    ]);
    for (const blob of emf) expect(blob._aws!.CloudWatchMetrics[0].Dimensions[0]).toHaveLength(2);
  });
});
