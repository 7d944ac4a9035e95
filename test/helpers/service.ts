/**
 * Test helpers: the local gateway on a free port (the real handlers behind
 * HTTP), fresh clients, and a small HTTP client.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { afterAll, beforeAll, inject } from 'vitest';
import { createGateway, listen, type StaticMount } from '../../infra/local/gateway.js';
import { CHANGES_PREFIX, subscribeChanges, unsubscribeChanges } from '../../infra/local/notifications.js';
import { startLocalQueues, type LocalQueues } from '../../infra/local/queues.js';
import { createClient } from '../../shared/clients/clients.js';
import { checkResponse } from './api-contract.js';
import type { ApiBody } from './api-body.js';
import { streamDrained } from './subscribers.js';

export type { ApiBody, ErrorBody, LegacyRecommendationsBody, RecommendationsBody } from './api-body.js';

export interface Service {
  url: string;
  /**
   * Waits until the page views tracked so far are applied: the local queue
   * sends what it gathered without waiting for the batching window, and
   * this resolves when no batch waits or runs (infra/local/queues.ts).
   */
  drain(): Promise<void>;
  /** The local queues (their batches and dead letters). */
  queues?: LocalQueues;
}

/** Starts the gateway and the local queues for this test file and stops them afterwards. */
export function useService({ mounts = [] }: { mounts?: StaticMount[] } = {}): Service {
  const service: Service = { url: '', drain: () => service.queues!.drain() };
  let server: http.Server;
  beforeAll(async () => {
    service.queues = await startLocalQueues({ log: () => undefined });
    for (const [name, value] of Object.entries(service.queues.env)) process.env[name] = value;
    server = createGateway({ mounts });
    const port = await listen(server, 0);
    service.url = `http://127.0.0.1:${port}`;
    process.env.PUBLIC_BASE_URL = service.url;
  });
  afterAll(async () => {
    await new Promise<void>((done) => server.close(() => done()));
    if (service.queues) await unsubscribeChanges(inject('notificationHub'), service.queues.env.CHANGES_QUEUE_URL);
    await service.queues?.stop();
  });
  return service;
}

/**
 * Sends this file's change queue (the webhook fan-out) the S3 notifications of
 * the client's raw event objects, as the bucket notification does in AWS
 * (infra/local/notifications.ts); without it no change of the client goes out.
 */
export async function watchChanges(service: Service, clientId: string): Promise<void> {
  await subscribeChanges(inject('notificationHub'), service.queues!.env.CHANGES_QUEUE_URL, `${CHANGES_PREFIX}${clientId}/`);
}

/**
 * A reply; `body` is what the caller says the route answers (`ApiBody<'listsList'>`, `ErrorBody`: the documented
 * types, which the contract check holds every reply to), `unknown` unless it says.
 */
export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * Routes that answer data derived from the table's stream (counts, list statistics, event files, newsletter picks
 * sized by the count): a GET of one first waits until the stream has drained, as a caller in AWS reads them a
 * moment after writing.
 */
const DERIVED = /\/subscribers\/count$|^\/v1\/stats\/lists\/|^\/v1\/newsletters\/events\/|^\/v1\/newsletters\/lists\/\d+\/recommendations$/;

/** Sends a request; JSON bodies are encoded, JSON replies decoded (a GET of derived data waits for the stream: DERIVED). */
export async function request<T = unknown>(
  url: string,
  { method = 'GET', body, token, headers = {}, raw }: { method?: string; body?: unknown; token?: string; headers?: Record<string, string>; raw?: string } = {},
): Promise<Reply<T>> {
  if (method === 'GET' && DERIVED.test(new URL(url).pathname)) await streamDrained();
  const res = await fetch(url, {
    method,
    redirect: 'manual',
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { 'x-service-client-token': token } : {}),
      ...headers,
    },
    body: raw ?? (body !== undefined ? JSON.stringify(body) : undefined),
  });
  const text = await res.text();
  checkResponse(method, url, res.status, res.headers, text);
  let parsed: unknown = text;
  const type = res.headers.get('content-type') ?? '';
  // NDJSON stays text (one JSON value per line).
  if (type.includes('json') && !type.includes('ndjson') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export interface TestClient {
  username: string;
  apiKey: string;
  token: string;
  trackingKey: string;
  defaultListId: number;
}

/**
 * A fresh client (as the admin CLI creates one) with a token obtained over
 * HTTP. `siteHosts`: the hosts its pages may be tracked on (none by default:
 * tracking is refused).
 */
export async function newClient(service: Service, { premiumEvents = false, siteHosts }: { premiumEvents?: boolean; siteHosts?: string[] } = {}): Promise<TestClient> {
  const username = `t-${randomUUID().slice(0, 12)}`;
  const { client, apiKey } = await createClient(username, { premiumEvents, siteHosts });
  const reply = await request<ApiBody<'tokenGet'>>(`${service.url}/v1/token?username=${username}&password=${encodeURIComponent(apiKey)}`);
  if (reply.status !== 200) throw new Error(`token: ${reply.status} ${reply.text}`);
  return { username, apiKey, token: reply.body.token, trackingKey: client.trackingKey, defaultListId: client.defaultListId };
}
