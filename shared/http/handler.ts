import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import httpUrlencodeBodyParser from '@middy/http-urlencode-body-parser';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { addLogKeys, count, logger, observe } from '../observability/index.js';
import { describeIssues } from '../validation.js';
import { BadRequestError, HttpError, InvalidRequestError, UnsupportedMediaTypeError } from './errors.js';
import { httpErrorOf } from './error-table.js';
import { isFormType, isJsonType, parseMediaType } from './media-type.js';
import { json, type HttpResult } from './response.js';
import type { AnySchema, RouteDef } from './route.js';

type SchemaOut<S> = S extends AnySchema ? v.InferOutput<S> : undefined;
type RequestOf<R extends RouteDef> = NonNullable<R['request']>;

/** What a handler function receives: validated input and the authenticated client. */
export interface HandlerInput<R extends RouteDef> {
  body: SchemaOut<RequestOf<R>['body']>;
  query: SchemaOut<RequestOf<R>['query']>;
  params: SchemaOut<RequestOf<R>['params']>;
  /** The client of the token (auth `token` routes only). Every query is scoped by it. */
  clientId: R['auth'] extends 'token' ? string : undefined;
  /** Normalised (lower-case) request headers. */
  headers: Record<string, string | undefined>;
  sourceIp: string;
  event: APIGatewayProxyEventV2;
  /** The Lambda context of the invocation (its deadline: shared/http/idempotency.ts). */
  context: Context;
}

type Request = middy.Request<APIGatewayProxyEventV2, HttpResult, Error, Context>;
/** The Lambda context of one invocation, carrying the client the token authenticated. */
type AuthContext = Context & { clientId?: string };
/** Resolves the client of a token header or throws a 401 (the token service, handed in by token routes). */
export type Authenticate = (token: string | undefined) => Promise<string>;

async function validate<S extends AnySchema | undefined>(schema: S, value: unknown, where: string): Promise<SchemaOut<S>> {
  if (!schema) return undefined as SchemaOut<S>;
  const result = await v.safeParseAsync(schema, value);
  if (!result.success) throw new BadRequestError(describeIssues(where, result.issues));
  return result.output as SchemaOut<S>;
}

/** Body parsing: JSON always, urlencoded forms where the route accepts them; anything else is a 415. */
function bodyParsers(route: RouteDef): middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult>[] {
  if (!route.request?.body) return [];
  const types = route.request.bodyTypes ?? ['json'];
  const accepted = types.map((t) => (t === 'json' ? 'application/json' : 'application/x-www-form-urlencoded')).join(' or ');
  const parsers: middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult>[] = [
    {
      before: (request: Request) => {
        if (request.event.body === undefined || request.event.body === '') throw new BadRequestError('body: a request body is required');
        // Media types are case-insensitive and may carry spaces before parameters (RFC 9110); middy's parsers
        // match one spelling only, so they (and the 415 check below) see the canonical form.
        const headers = (request.event.headers ??= {});
        const mediaType = parseMediaType(headers['content-type']);
        if (mediaType) headers['content-type'] = mediaType.normalized;
      },
    },
    httpJsonBodyParser({ disableContentTypeError: true }) as middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult>,
  ];
  if (types.includes('form')) {
    parsers.push(httpUrlencodeBodyParser({ disableContentTypeError: true }) as unknown as middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult>);
  }
  parsers.push({
    before: (request: Request) => {
      const essence = parseMediaType(request.event.headers?.['content-type'])?.essence ?? '';
      const parsed = types.some((t) => (t === 'json' ? isJsonType(essence) : isFormType(essence)));
      if (!parsed) throw new UnsupportedMediaTypeError(`Content-Type must be ${accepted}`);
    },
  });
  return parsers;
}

/** Maps any error to the spec's JSON error body; unknown errors are logged and become a generic 500. */
function errorResponder(route?: RouteDef): middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult> {
  return {
    onError: (request: Request) => {
      const raw = request.error as (Error & { statusCode?: number; cause?: { package?: string; message?: string } }) | null;
      let err: Error | null = httpErrorOf(raw) ?? raw;
      if (raw?.cause?.package?.startsWith('@middy/http-') && raw.statusCode === 415 && /malformed/i.test(raw.message)) {
        const kind = raw.cause.package.includes('json') ? 'JSON' : 'form data';
        err = new BadRequestError(`body: not valid ${kind}${raw.cause.message ? ` (${raw.cause.message})` : ''}`);
      }
      if (err instanceof HttpError && err.status === 400 && route?.legacyErrors && !(err instanceof InvalidRequestError)) {
        err = new InvalidRequestError(`1 error(s): ${err.message}`);
      }
      if (err instanceof HttpError) {
        request.response = json(err.status, err.body(), err.headers);
      } else {
        request.response = json(500, { status: 500, cause: 'Internal error; it has been logged' });
      }
      // One error line with the stack for every 5xx; a 4xx is the caller's problem and only counted.
      const status = request.response.statusCode ?? 500;
      count(status >= 500 ? 'ServerErrors' : 'ClientErrors');
      if (status >= 500) logger.error('request failed', { status, error: err ?? undefined });
    },
  };
}

/**
 * The one middy stack of every HTTP function: error responder, header
 * normaliser, token auth, body parser(s), then valibot validation and the
 * handler function. Handler files only call this. A `token` route hands in
 * its `authenticate`, so routes without a token never load the token,
 * clients or DynamoDB code.
 */
export function httpHandler<R extends RouteDef>(
  route: R,
  fn: (input: HandlerInput<R>) => HttpResult | Promise<HttpResult>,
  ...auth: R['auth'] extends 'token' ? [authenticate: Authenticate] : []
) {
  const [authenticate] = auth as [Authenticate?];
  if (route.auth === 'token' && !authenticate) throw new Error(`${route.path}: a token route needs its authenticate function`);
  let stack = middy<APIGatewayProxyEventV2, HttpResult>();
  for (const m of observe<APIGatewayProxyEventV2, HttpResult>('route', `${route.method} ${route.path}`)) stack = stack.use(m);
  stack = stack
    .use(errorResponder(route))
    .use(httpHeaderNormalizer() as middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult>)
    // Authentication before the body is looked at: an unauthenticated request is a 401 whatever its body.
    .use({
      before: async (request: Request) => {
        if (authenticate) {
          (request.context as AuthContext).clientId = await authenticate(request.event.headers?.['x-service-client-token']);
          addLogKeys({ clientId: (request.context as AuthContext).clientId });
        }
      },
    });
  for (const parser of bodyParsers(route)) stack = stack.use(parser);
  return stack.handler(async (event, context) => {
    const headers = event.headers as Record<string, string | undefined>;
    const clientId = (context as AuthContext).clientId;
    const input = {
      params: await validate(route.request?.params, event.pathParameters ?? {}, 'path'),
      query: await validate(route.request?.query, event.queryStringParameters ?? {}, 'query'),
      body: await validate(route.request?.body, event.body, 'body'),
      clientId,
      headers,
      sourceIp: event.requestContext?.http?.sourceIp ?? '',
      event,
      context,
    } as HandlerInput<R>;
    return fn(input);
  });
}

/** The same error handling for a function with no route row (the `$default` fallback). */
export function rawHttpHandler(fn: (event: APIGatewayProxyEventV2) => HttpResult | Promise<HttpResult>) {
  let stack = middy<APIGatewayProxyEventV2, HttpResult>();
  for (const m of observe<APIGatewayProxyEventV2, HttpResult>('route', '$default')) stack = stack.use(m);
  return stack.use(errorResponder()).handler(fn);
}
