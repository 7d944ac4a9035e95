/**
 * The local gateway: turns each HTTP request into an API Gateway HTTP API
 * (payload 2.0) event and invokes the real handler of the matching row of
 * the route table, as API Gateway does in AWS. Unmatched requests go to the
 * same fallback function as API Gateway's `$default` route.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { corsPolicy } from '../../shared/http/cors.js';
import { matchRoute } from '../../shared/http/router.js';
import { fallbackHandler } from '../../shared/routes.js';
import { useOutboxMailer } from '../../shared/mail/outbox-mailer.js';
import { requestLine } from './console.js';
import { inFunction } from './recording.js';

// Locally, MAIL_TRANSPORT=outbox writes .eml files (the Lambdas only know SES).
useOutboxMailer();

/** Lambda's synchronous invocation payload limit; API Gateway fails larger requests. */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface StaticMount {
  /** URL prefix, e.g. `/lib/v1/`. */
  prefix: string;
  /**
   * `request`: the request's headers (the demo feed builds absolute links from `host` and answers conditional requests).
   * The gateway awaits the result inside its try: a mount may answer synchronously, and what it throws is a 500 either way.
   */
  serve(path: string, request?: { headers: http.IncomingHttpHeaders }): StaticFile | undefined | Promise<StaticFile | undefined>;
}

/** What a static mount answers for a path it serves. */
export interface StaticFile {
  status: number;
  body: Buffer | string;
  contentType: string;
  headers?: Record<string, string>;
}

const root = resolve(import.meta.dirname, '../..');
const modules = new Map<string, Promise<Handler>>();

function loadHandler(entry: string): Promise<Handler> {
  let loaded = modules.get(entry);
  if (!loaded) {
    loaded = import(pathToFileURL(resolve(root, entry)).href).then((m: { handler: Handler }) => m.handler);
    modules.set(entry, loaded);
  }
  return loaded;
}

const TEXT_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|javascript|xml)|[^;]*\+json)/i;

function toEvent(req: http.IncomingMessage, body: Buffer, routeKey: string, params: Record<string, string> | undefined): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const isText = body.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? 'text/plain');
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie ? req.headers.cookie.split(/;\s*/) : undefined,
    headers,
    queryStringParameters: url.search ? query : undefined,
    pathParameters: params && Object.keys(params).length > 0 ? params : undefined,
    body: body.length === 0 ? undefined : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: !isText,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
}

/**
 * The invocation's context. Its remaining time is a duration, timed by the
 * monotonic clock: the wall clock may be simulated (bench/sim-clock.ts runs a
 * week in minutes), and a deadline on it lapsed within milliseconds, so
 * middy's timeout answered 500 to requests that had not run out of time.
 */
export function lambdaContext(name: string): Context {
  const deadline = performance.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.round(deadline - performance.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function corsHeaders(): Record<string, string> {
  return {
    'access-control-allow-origin': corsPolicy.allowOrigins.join(','),
    'access-control-expose-headers': corsPolicy.exposeHeaders.join(','),
  };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...corsHeaders() });
  res.end(JSON.stringify(body));
}

async function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Creates the gateway server; `mounts` serve static files (browser library, demo site, dev pages); `log` gets one
 * line per request when it has been answered (`npm start`'s console).
 */
export function createGateway({ mounts = [], log }: { mounts?: StaticMount[]; log?: (line: string) => void } = {}): http.Server {
  // Every fault is answered inside (the catch below): the server does not wait on the promise.
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (log) {
      const started = performance.now();
      res.once('finish', () => log(requestLine(req.method ?? 'GET', new URL(req.url ?? '/', 'http://localhost').pathname, res.statusCode, performance.now() - started)));
    }
    try {
      const method = req.method ?? 'GET';
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (method === 'OPTIONS') {
        res.writeHead(204, {
          ...corsHeaders(),
          'access-control-allow-methods': corsPolicy.allowMethods.join(','),
          'access-control-allow-headers': corsPolicy.allowHeaders.join(','),
          'access-control-max-age': String(corsPolicy.maxAgeSeconds),
        });
        return res.end();
      }
      const mount = method === 'GET' ? mounts.find((m) => path.startsWith(m.prefix)) : undefined;
      if (mount) {
        const file = await mount.serve(path.slice(mount.prefix.length), { headers: req.headers });
        if (file) {
          // No CORS on static pages: the dev outbox holds confirmation links no other site may read.
          res.writeHead(file.status, { 'content-type': file.contentType, 'cache-control': 'no-cache', ...file.headers });
          return res.end(file.body);
        }
      }
      const body = await readBody(req);
      if (!body) {
        res.setHeader('connection', 'close');
        req.resume();
        return sendJson(res, 413, { status: 413, cause: `Request body larger than ${MAX_BODY_BYTES} bytes` });
      }
      const matched = matchRoute(method, path);
      const routeKey = matched ? `${matched.route.method} ${matched.route.path}` : '$default';
      const entry = matched ? matched.route.handler : fallbackHandler;
      const handler = await loadHandler(entry);
      const fn = matched?.route.id ?? 'fallback';
      const result = await inFunction(fn, () => handler(toEvent(req, body, routeKey, matched?.params), lambdaContext(fn)));
      const headers: Record<string, string | string[]> = { ...corsHeaders() };
      for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
      if (result.cookies?.length) headers['set-cookie'] = result.cookies;
      res.writeHead(result.statusCode ?? 200, headers);
      res.end(result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined);
    } catch (err) {
      console.error('local gateway:', err);
      if (!res.headersSent) sendJson(res, 500, { status: 500, cause: 'Internal error (local gateway)' });
      else res.end();
    }
  };
  const server = http.createServer((req, res) => void serve(req, res));
  answerClientErrors(server);
  return server;
}

/**
 * Requests Node's HTTP parser refuses before any handler runs (a request line
 * or headers above its limit, malformed HTTP) still get the JSON error body,
 * as API Gateway answers such requests itself in AWS.
 */
function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const body = JSON.stringify({ status, cause: tooLarge ? 'Request line and headers are too large' : 'Malformed HTTP request' });
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

/** Listens on the port, or rejects with a clear message when it is taken. */
export function listen(server: http.Server, port: number, host = '127.0.0.1'): Promise<number> {
  return new Promise((done, fail) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      fail(err.code === 'EADDRINUSE' ? new Error(`Port ${port} is already in use; stop what uses it or set PORT to another port`) : err),
    );
    server.listen(port, host, () => done((server.address() as { port: number }).port));
  });
}
