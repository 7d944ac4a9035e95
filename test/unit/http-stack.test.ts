import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { httpHandler } from '../../shared/http/handler.js';
import { json } from '../../shared/http/response.js';
import { compilePath, type RouteDef } from '../../shared/http/route.js';
import { captureOutput } from '../helpers/logs.js';

const echoRoute = {
  method: 'POST',
  path: '/v1/echo/{id}',
  handler: 'unused',
  auth: 'none',
  access: {},
  summary: 'echo',
  tags: [],
  request: {
    params: v.object({ id: v.pipe(v.string(), v.regex(/^\d+$/, 'must be digits')) }),
    body: v.object({ email: v.pipe(v.string(), v.email('must be a valid email')) }),
  },
  responses: {},
} as const satisfies RouteDef;

const echo = httpHandler(echoRoute, ({ body, params }) => json(200, { body, params }));

function event(body: string | undefined, contentType = 'application/json', id = '1'): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /v1/echo/{id}',
    rawPath: `/v1/echo/${id}`,
    rawQueryString: '',
    headers: { 'Content-Type': contentType },
    pathParameters: { id },
    body,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST', path: `/v1/echo/${id}`, sourceIp: '127.0.0.1' } },
  } as unknown as APIGatewayProxyEventV2;
}

const call = async (e: APIGatewayProxyEventV2) => {
  const res = await echo(e, {} as Context);
  return { status: res.statusCode, body: JSON.parse(res.body as string) as Record<string, unknown> };
};

describe('the middy stack', () => {
  it('passes validated input to the handler function', async () => {
    expect(await call(event('{"email":"a@b.co"}'))).toEqual({ status: 200, body: { body: { email: 'a@b.co' }, params: { id: '1' } } });
  });

  it('answers 400 with a cause for a body that is not JSON', async () => {
    const res = await call(event('{"email":'));
    expect(res.status).toBe(400);
    expect(res.body.cause).toMatch(/^body: not valid JSON/);
  });

  it('answers 415 for another content type and 400 for a missing body', async () => {
    expect(await call(event('email=a', 'text/plain'))).toEqual({ status: 415, body: { status: 415, cause: 'Content-Type must be application/json' } });
    expect(await call(event(undefined))).toEqual({ status: 400, body: { status: 400, cause: 'body: a request body is required' } });
  });

  it('names the invalid field in path and body', async () => {
    expect((await call(event('{"email":"nope"}'))).body).toEqual({ status: 400, cause: 'body.email: must be a valid email' });
    expect((await call(event('{}'))).body).toEqual({ status: 400, cause: 'body.email: is required' });
    expect((await call(event('{"email":"a@b.co"}', 'application/json', 'x'))).body).toEqual({ status: 400, cause: 'path.id: must be digits' });
  });

  it('hides unexpected errors behind a generic 500', async () => {
    const failing = httpHandler(echoRoute, () => {
      throw new Error('secret detail');
    });
    const output = captureOutput();
    try {
      const res = await failing(event('{"email":"a@b.co"}'), {} as Context);
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain('secret detail');
      expect(output.text()).toContain('secret detail');
    } finally {
      output.restore();
    }
  });
});

describe('compilePath', () => {
  it('matches path parameters and greedy parameters', () => {
    expect(compilePath('/v1/lists/{list_id}/subscribers')('/v1/lists/12/subscribers')).toEqual({ list_id: '12' });
    expect(compilePath('/v1/lists/{list_id}/subscribers')('/v1/lists/12/subscribers/x')).toBeUndefined();
    expect(compilePath('/v1/r/{path+}')('/v1/r/a/b%20c')).toEqual({ path: 'a/b c' });
    expect(compilePath('/v1/openapi.json')('/v1/openapiXjson')).toBeUndefined();
  });
});
