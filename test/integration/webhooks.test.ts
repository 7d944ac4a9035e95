/**
 * Webhooks through the local stack: registration over HTTP, then subscriber
 * writes through the gateway → raw event objects in the S3 emulator → its
 * notifications → the fan-out job → the delivery job → a receiver on
 * 127.0.0.1, whose requests are verified with the `standardwebhooks`
 * package (an independent implementation of the specification).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { BatchExecuteStatementCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { invokeAsync } from '../../infra/local/jobs.js';
import { sendTo } from '../../infra/local/notifications.js';
import { config } from '../../shared/config.js';
import { ddb } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { sourceKey } from '../../shared/imports/objects.js';
import { jobs } from '../../shared/jobs.js';
import { createList } from '../../shared/lists/lists.js';
import { sqs } from '../../shared/queue.js';
import { defaultGuid } from '../../shared/subscribers/rules.js';
import { MAX_DELAY_SECONDS, type DeliveryMessage } from '../../shared/webhooks/queue.js';
import { ChangeEventSchema } from '../../shared/webhooks/schemas.js';
import { DEFAULT_RETRY_DELAYS } from '../../shared/webhooks/settings.js';
import { sqsEvent } from '../fixtures/ses/fixtures.js';
import { newClient, request, useService, watchChanges, type ApiBody, type ErrorBody, type TestClient } from '../helpers/service.js';
import { ingestSes, sesNotification } from '../helpers/ses.js';
import { rawEventObjects } from '../helpers/subscribers.js';

const service = useService();

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  answered: number;
}

/** A receiver on 127.0.0.1: answers each request by `answer` (status, or 'hang' to never answer), records everything. */
function receiver() {
  const requests: Received[] = [];
  let answer: (r: Received) => number | 'hang' = () => 204;
  /** Bodies served to GET requests by path (an imported CSV file). */
  const files = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') {
        const file = files.get(req.url ?? '');
        res.writeHead(file === undefined ? 404 : 200, { 'content-type': 'text/csv' }).end(file ?? '');
        return;
      }
      const got: Received = { path: req.url ?? '', headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body: Buffer.concat(chunks).toString('utf8'), answered: 0 };
      const status = answer(got);
      requests.push(got);
      if (status === 'hang') return;
      got.answered = status;
      res.writeHead(status).end();
    });
  });
  return {
    requests,
    files,
    server,
    set answer(fn: (r: Received) => number | 'hang') {
      answer = fn;
    },
    url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    /** The requests to `path` once `n` of them were answered 2xx (or throws after `ms`). */
    async delivered(path: string, n: number, ms = 20_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const ok = requests.filter((r) => r.path === path && r.answered >= 200 && r.answered < 300);
        if (ok.length >= n) return ok;
        if (Date.now() > deadline) throw new Error(`${ok.length} of ${n} deliveries to ${path} after ${ms} ms (${requests.filter((r) => r.path === path).length} requests)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const rx = receiver();
const saved = { ...process.env };
beforeAll(async () => {
  await new Promise<void>((done) => rx.server.listen(0, '127.0.0.1', done));
});
afterAll(async () => {
  rx.server.closeAllConnections();
  await new Promise<void>((done) => rx.server.close(() => done()));
});
afterEach(() => {
  vi.restoreAllMocks();
  for (const name of ['WEBHOOK_ALLOW_LOOPBACK', 'WEBHOOK_RETRY_DELAYS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_MAX_PER_CLIENT', 'IMPORT_ALLOW_LOOPBACK']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  rx.answer = () => 204;
});

const hooksUrl = () => `${service.url}/v1/webhooks`;
const register = (client: TestClient, body: unknown) => request<ApiBody<'webhooksCreate'>>(hooksUrl(), { method: 'POST', token: client.token, body });
const subscribe = (client: TestClient, body: unknown) =>
  request<ApiBody<'subscribersPost'>>(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, { method: 'POST', token: client.token, body });

/** Verifies a request as a receiver would, with the standardwebhooks package; answers the parsed event. */
function verified(secret: string, r: Received): v.InferOutput<typeof ChangeEventSchema> {
  const payload = new Webhook(secret).verify(r.body, r.headers);
  return v.parse(ChangeEventSchema, payload);
}

describe('POST/GET/DELETE /v1/webhooks', () => {
  it('registers a webhook with a whsec_ secret, lists it without the secret, deletes it; the caller’s own only', async () => {
    const [a, b] = await Promise.all([newClient(service), newClient(service)]);
    const created = await register(a, { url: rx.url('/a'), events: ['subscriber.subscribed', 'subscriber.unsubscribed'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: rx.url('/a'), events: ['subscriber.subscribed', 'subscriber.unsubscribed'] });
    expect(created.body.id).toMatch(/^wh_[0-9a-f]{24}$/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.headers.get('location')).toBe(`/v1/webhooks/${created.body.id}`);

    const listed = await request<ApiBody<'webhooksList'>>(hooksUrl(), { token: a.token });
    expect(listed.body).toEqual([{ id: created.body.id, url: rx.url('/a'), events: created.body.events, created_at: created.body.created_at }]);
    expect((await request<ApiBody<'webhooksList'>>(hooksUrl(), { token: b.token })).body).toEqual([]);
    // Another client cannot delete it.
    expect((await request<ErrorBody>(`${hooksUrl()}/${created.body.id}`, { method: 'DELETE', token: b.token })).status).toBe(404);
    expect((await request(`${hooksUrl()}/${created.body.id}`, { method: 'DELETE', token: a.token })).status).toBe(204);
    expect((await request<ErrorBody>(`${hooksUrl()}/${created.body.id}`, { method: 'DELETE', token: a.token })).body).toEqual({ status: 404, cause: `Unknown webhook ${created.body.id}` });
    expect((await request<ErrorBody>(`${hooksUrl()}/nope`, { method: 'DELETE', token: a.token })).status).toBe(400);
    expect((await request(hooksUrl())).status).toBe(401);
  });

  it('refuses bad bodies with a precise cause', async () => {
    const a = await newClient(service);
    const cases: Array<[unknown, string]> = [
      [{ url: rx.url('/x'), events: ['subscriber.exploded'] }, 'events: each must be one of'],
      [{ url: rx.url('/x'), events: [] }, 'events must name at least one event type'],
      [{ url: rx.url('/x'), events: ['import.finished', 'import.finished'] }, 'events must not repeat a type'],
      [{ events: ['subscriber.subscribed'] }, 'url'],
      [{ url: 'ftp://example.com/x', events: ['subscriber.subscribed'] }, 'url: only http and https URLs'],
      [{ url: 'https://u:p@example.com/x', events: ['subscriber.subscribed'] }, 'url: URLs with credentials are not accepted'],
    ];
    for (const [body, cause] of cases) {
      const reply = await register(a, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect((reply.body as unknown as ErrorBody).cause).toContain(cause);
    }
  });

  it('refuses private, link-local, metadata and (unless allowed locally) loopback addresses and plain http', async () => {
    const a = await newClient(service);
    const refused = 'url: the address is not allowed: webhooks go to public https addresses only';
    for (const url of ['https://10.1.2.3/h', 'https://192.168.0.1/h', 'https://169.254.169.254/latest/meta-data', 'https://[fd00::1]/h', 'https://100.64.0.1/h']) {
      const reply = await register(a, { url, events: ['subscriber.subscribed'] });
      expect([url, reply.status, (reply.body as unknown as ErrorBody).cause]).toEqual([url, 400, refused]);
    }
    process.env.WEBHOOK_ALLOW_LOOPBACK = 'false';
    for (const url of [rx.url('/h').replace('http:', 'https:'), 'https://[::1]/h', 'https://localhost/h']) {
      const reply = await register(a, { url, events: ['subscriber.subscribed'] });
      expect([url, reply.status, (reply.body as unknown as ErrorBody).cause]).toEqual([url, 400, refused]);
    }
    const http = await register(a, { url: 'http://example.com/h', events: ['subscriber.subscribed'] });
    expect(http.body).toEqual({ status: 400, cause: 'url: webhook URLs must be https' });
  });
  it('answers 409 past the per-client limit (WEBHOOK_MAX_PER_CLIENT, 10 by default), with the cause; a deletion makes room; other clients are not counted', async () => {
    const [a, b] = await Promise.all([newClient(service), newClient(service)]);
    const body = (i: number) => ({ url: rx.url(`/limit/${i}`), events: ['subscriber.subscribed'] });
    const made = [];
    for (let i = 0; i < 10; i++) made.push(await register(a, body(i)));
    expect(made.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 201));
    const over = await register(a, body(10));
    expect([over.status, over.body]).toEqual([409, { status: 409, cause: 'A client has at most 10 webhooks; delete one first' }]);
    expect((await request<ApiBody<'webhooksList'>>(hooksUrl(), { token: a.token })).body).toHaveLength(10);
    expect((await register(b, body(0))).status).toBe(201);
    expect((await request(`${hooksUrl()}/${made[3].body.id}`, { method: 'DELETE', token: a.token })).status).toBe(204);
    expect((await register(a, body(11))).status).toBe(201);
    expect((await register(a, body(12))).status).toBe(409);
    // The limit is a setting.
    process.env.WEBHOOK_MAX_PER_CLIENT = '1';
    const c = await newClient(service);
    expect((await register(c, body(0))).status).toBe(201);
    expect((await register(c, body(1))).body).toEqual({ status: 409, cause: 'A client has at most 1 webhooks; delete one first' });
  });

  it('holds the limit when registrations race', async () => {
    const a = await newClient(service);
    const replies = await Promise.all(Array.from({ length: 14 }, (_, i) => register(a, { url: rx.url(`/race/${i}`), events: ['subscriber.subscribed'] })));
    expect(replies.map((r) => r.status).sort()).toEqual([...Array.from({ length: 10 }, () => 201), ...Array.from({ length: 4 }, () => 409)]);
    expect((await request<ApiBody<'webhooksList'>>(hooksUrl(), { token: a.token })).body).toHaveLength(10);
  });
});

describe('deliveries', () => {
  it('POSTs each subscriber change signed per Standard Webhooks, in the order of the write, and puts it on the event bus', async () => {
    const a = await newClient(service);
    await watchChanges(service, a.username);
    const hook = (await register(a, { url: rx.url(`/d/${a.username}`), events: ['subscriber.subscribed', 'subscriber.unsubscribed'] })).body;
    expect((await subscribe(a, [{ email: 'ann@x.co', guid: 'g-ann' }, { email: 'bob@x.co' }, { email: 'cid@x.co' }])).status).toBe(200);
    const first = await rx.delivered(`/d/${a.username}`, 3);
    const events = first.map((r) => verified(hook.secret, r));
    expect(events.map((e) => [e.type, e.email, e.list_id, e.client_id, e.source])).toEqual(
      ['ann@x.co', 'bob@x.co', 'cid@x.co'].map((email) => ['subscriber.subscribed', email, a.defaultListId, a.username, 'subscribers']),
    );
    expect(events.map((e) => e.guid)).toEqual(['g-ann', defaultGuid('bob@x.co'), defaultGuid('cid@x.co')]);
    for (const [i, r] of first.entries()) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toBe(events[i].id);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    // A signature made with another secret, or over another body, does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(first[0].body, first[0].headers)).toThrow();
    expect(() => new Webhook(hook.secret).verify(first[0].body.replace('ann', 'eve'), first[0].headers)).toThrow();

    await subscribe(a, [{ email: 'bob@x.co', subscribed: false, unsubscribed_cause: 'PUBLISHER' }]);
    const all = await rx.delivered(`/d/${a.username}`, 4);
    expect(verified(hook.secret, all[3])).toMatchObject({ type: 'subscriber.unsubscribed', email: 'bob@x.co', cause: 'PUBLISHER' });
    expect(new Set(all.map((r) => r.headers['webhook-id'])).size).toBe(4);

    // The same changes on the (local) bus: detail-type the change type, detail the same JSON.
    const onBus = service.queues!.bus.filter((e) => e.Detail?.includes(`"client_id":"${a.username}"`));
    expect(onBus.map((e) => [e.Source, e.DetailType])).toEqual([
      ...Array.from({ length: 3 }, () => ['newsletter-service', 'subscriber.subscribed']),
      ['newsletter-service', 'subscriber.unsubscribed'],
    ]);
    expect(onBus.map((e) => JSON.parse(e.Detail!) as unknown)).toEqual([...events, verified(hook.secret, all[3])]);
  });

  it('puts a write of 25 changes on the bus in calls of at most 10 (EventBridge refuses more; so does the local bus), none lost', async () => {
    const a = await newClient(service);
    await watchChanges(service, a.username);
    await register(a, { url: rx.url(`/many/${a.username}`), events: ['subscriber.subscribed'] });
    const emails = Array.from({ length: 25 }, (_, i) => `many${i}@x.co`);
    expect((await subscribe(a, emails.map((email) => ({ email })))).status).toBe(200);
    await rx.delivered(`/many/${a.username}`, 25);
    const onBus = () => service.queues!.bus.filter((e) => e.Detail?.includes(`"client_id":"${a.username}"`));
    await vi.waitFor(() => expect(onBus()).toHaveLength(25), { timeout: 10_000 });
    expect(onBus().map((e) => (JSON.parse(e.Detail!) as { email: string }).email)).toEqual(emails);
  });

  it('sends subscriber.bounced and subscriber.complained from SES notifications (the ingester’s records), one signed delivery each with the documented fields', async () => {
    const a = await newClient(service, { premiumEvents: true });
    await watchChanges(service, a.username);
    const path = `/ses/${a.username}`;
    const hook = (await register(a, { url: rx.url(path), events: ['subscriber.bounced', 'subscriber.complained'] })).body;
    expect((await subscribe(a, [{ email: 'gone@x.co', guid: 'g-gone' }, { email: 'angry@x.co' }])).status).toBe(200);
    const started = Date.now();
    const batch = sqsEvent([sesNotification('bounce-permanent', a, 'gone@x.co'), sesNotification('complaint', a, 'angry@x.co')]);
    expect(await ingestSes(batch)).toMatchObject({ events: 2, unsubscribed: 2, batchItemFailures: [] });
    const got = await rx.delivered(path, 2);
    const events = got.map((r) => verified(hook.secret, r)).sort((x, y) => x.type.localeCompare(y.type));
    const common = { id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) as string, time: expect.any(String) as string, client_id: a.username, list_id: a.defaultListId, guid: null, cause: null, source: 'ses' };
    expect(events).toEqual([
      { ...common, type: 'subscriber.bounced', email: 'gone@x.co', data: { bounce_type: 'hard', message: 'smtp; 550 5.1.1 user unknown', campaign_id: 'cmp-42', newsletter_id: 'nl-7' } },
      { ...common, type: 'subscriber.complained', email: 'angry@x.co', data: { complaint_type: 'abuse', campaign_id: 'cmp-42', newsletter_id: 'nl-7' } },
    ]);
    for (const e of events) expect(Math.abs(Date.parse(e.time) - started)).toBeLessThan(60_000);
    for (const r of got) {
      expect(r.headers['webhook-id']).toBe((JSON.parse(r.body) as { id: string }).id);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
    // The same on the bus; the unsubscriptions the bounce and the complaint caused are not what this webhook asked for.
    const onBus = () => service.queues!.bus.filter((e) => e.Detail?.includes(`"client_id":"${a.username}"`) && e.DetailType !== 'subscriber.subscribed');
    for (let waited = 0; onBus().length < 4 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(onBus().map((e) => e.DetailType).sort()).toEqual(['subscriber.bounced', 'subscriber.complained', 'subscriber.unsubscribed', 'subscriber.unsubscribed']);
    expect(rx.requests.filter((r) => r.path === path)).toHaveLength(2);
    expect(onBus().filter((e) => e.DetailType !== 'subscriber.unsubscribed').map((e) => JSON.parse(e.Detail!) as unknown).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual(
      [...events].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    );
    // SQS delivers the batch again: the ingester stores it again and the changes go out again (at least once), with the same webhook-ids.
    await ingestSes(batch);
    const again = await rx.delivered(path, 4);
    expect(again.map((r) => r.headers['webhook-id']).sort()).toEqual([...events, ...events].map((e) => e.id).sort());
  });

  it('sends a webhook only the types it asked for', async () => {
    const a = await newClient(service);
    await watchChanges(service, a.username);
    await register(a, { url: rx.url(`/only-unsub/${a.username}`), events: ['subscriber.unsubscribed'] });
    const all = (await register(a, { url: rx.url(`/all/${a.username}`), events: ['subscriber.subscribed', 'subscriber.unsubscribed'] })).body;
    await subscribe(a, [{ email: 'x@x.co' }]);
    await subscribe(a, [{ email: 'x@x.co', subscribed: false }]);
    await rx.delivered(`/all/${a.username}`, 2);
    const only = await rx.delivered(`/only-unsub/${a.username}`, 1);
    expect(rx.requests.filter((r) => r.path === `/only-unsub/${a.username}`)).toHaveLength(1);
    expect(JSON.parse(only[0].body)).toMatchObject({ type: 'subscriber.unsubscribed', cause: 'READER' });
    expect(all.events).toHaveLength(2);
  });

  it('retries failures (5xx, timeouts) with the same webhook-id and keeps the order of the write', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0,1,1,1';
    process.env.WEBHOOK_TIMEOUT_MS = '500';
    const a = await newClient(service);
    await watchChanges(service, a.username);
    const path = `/flaky/${a.username}`;
    const hook = (await register(a, { url: rx.url(path), events: ['subscriber.subscribed'] })).body;
    // Each event: a 500, then no answer (timeout), then 200.
    const seen = new Map<string, number>();
    rx.answer = (r) => {
      if (r.path !== path) return 204;
      const n = (seen.get(r.headers['webhook-id']) ?? 0) + 1;
      seen.set(r.headers['webhook-id'], n);
      return n === 1 ? 500 : n === 2 ? 'hang' : 200;
    };
    await subscribe(a, [{ email: 'one@x.co' }, { email: 'two@x.co' }]);
    const ok = await rx.delivered(path, 2, 30_000);
    const tries = rx.requests.filter((r) => r.path === path);
    // The second event waits behind the first: its first attempt comes after the first's success.
    expect(tries.map((r) => [(JSON.parse(r.body) as { email: string }).email, r.answered || 'no answer'])).toEqual([
      ['one@x.co', 500],
      ['one@x.co', 'no answer'],
      ['one@x.co', 200],
      ['two@x.co', 500],
      ['two@x.co', 'no answer'],
      ['two@x.co', 200],
    ]);
    for (const r of tries) verified(hook.secret, r);
    expect(new Set(tries.slice(0, 3).map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(ok.map((r) => verified(hook.secret, r).email)).toEqual(['one@x.co', 'two@x.co']);
  });

  it('retries a receiver that keeps failing on the default schedule (5 s … 10 h, about 27.5 hours; delays over SQS’s 15 minutes in hops), with the same webhook-id, then dead-letters', async () => {
    const a = await newClient(service);
    await watchChanges(service, a.username);
    const path = `/always-down/${a.username}`;
    const hook = (await register(a, { url: rx.url(path), events: ['subscriber.subscribed'] })).body;
    rx.answer = (r) => (r.path === path ? 500 : 204);
    // The local delivery queue waits out DelaySeconds with a timer. Here each delay passes at once: the message is queued
    // without delay and its notBefore moved back by the delay asked for, as if the clock had moved on by it meanwhile.
    const queue = service.queues!.queues.get('webhooksDeliver')!;
    const send = queue.send.bind(queue);
    const hops: Array<{ attempt: number; delay: number }> = [];
    vi.spyOn(queue, 'send').mockImplementation((body: string, delaySeconds = 0) => {
      const message = JSON.parse(body) as DeliveryMessage;
      if (message.webhookId !== hook.id || delaySeconds === 0) return send(body, delaySeconds);
      hops.push({ attempt: message.attempt, delay: delaySeconds });
      return send(JSON.stringify({ ...message, notBefore: message.notBefore! - delaySeconds * 1000 }), 0);
    });
    await subscribe(a, [{ email: 'down@x.co' }]);
    const sink = service.queues!.sinks.get('webhookDeadLetters')!;
    const dead = () => sink.map((b) => JSON.parse(b) as DeliveryMessage).filter((m) => m.webhookId === hook.id);
    for (let waited = 0; dead().length === 0 && waited < 30_000; waited += 50) await new Promise((r) => setTimeout(r, 50));

    const tries = rx.requests.filter((r) => r.path === path);
    expect(tries.map((r) => r.answered)).toEqual(Array.from({ length: DEFAULT_RETRY_DELAYS.length + 1 }, () => 500));
    const events = tries.map((r) => verified(hook.secret, r));
    expect(new Set(tries.map((r) => r.headers['webhook-id']))).toEqual(new Set([events[0].id]));
    expect(events.map((e) => e.email)).toEqual(tries.map(() => 'down@x.co'));
    // Each retry waits its documented delay (docs/api.md: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), in hops of at most 15 minutes.
    const waitedBefore = (attempt: number) => hops.filter((h) => h.attempt === attempt).map((h) => h.delay);
    const documented = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];
    expect(documented.map((_, i) => waitedBefore(i + 1).reduce((x, y) => x + y, 0))).toEqual(documented);
    expect(documented.map((_, i) => waitedBefore(i + 1).length)).toEqual(documented.map((d) => Math.ceil(d / MAX_DELAY_SECONDS)));
    expect(Math.max(...hops.map((h) => h.delay))).toBe(MAX_DELAY_SECONDS);
    const total = hops.reduce((x, h) => x + h.delay, 0) / 3600;
    expect(total).toBeGreaterThan(24);
    expect(total).toBeLessThan(28);
    // Then the dead-letter queue, once, with the event, the number of attempts and why the last failed.
    expect(dead()).toMatchObject([{ attempt: DEFAULT_RETRY_DELAYS.length, events: [{ id: events[0].id, email: 'down@x.co' }], lastError: expect.stringContaining('500') as string }]);
    // The local queue, as SQS, refuses a longer delay than 15 minutes: a retry that asked for one would fail here as in AWS.
    const longer = new SendMessageCommand({ QueueUrl: process.env.WEBHOOK_QUEUE_URL, MessageBody: '{}', DelaySeconds: MAX_DELAY_SECONDS + 1 });
    await expect(sqs.send(longer)).rejects.toThrow(`Value ${MAX_DELAY_SECONDS + 1} for parameter DelaySeconds is invalid`);
  });

  it('dead-letters what still fails after the last retry; an address refused at connect time is not reached', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0,0';
    const a = await newClient(service);
    await watchChanges(service, a.username);
    const down = `/down/${a.username}`;
    const hook = (await register(a, { url: rx.url(down), events: ['subscriber.subscribed'] })).body;
    rx.answer = (r) => (r.path === down ? 503 : 204);
    await subscribe(a, [{ email: 'lost@x.co' }]);
    const sink = service.queues!.sinks.get('webhookDeadLetters')!;
    const mine = () => sink.map((b) => JSON.parse(b) as { webhookId: string; events: Array<{ email: string }>; attempt: number; lastError: string }).filter((m) => m.webhookId === hook.id);
    for (let waited = 0; mine().length === 0 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(rx.requests.filter((r) => r.path === down).map((r) => r.answered)).toEqual([503, 503, 503]);
    expect(mine()).toMatchObject([{ attempt: 2, events: [{ email: 'lost@x.co' }], lastError: expect.stringContaining('503') as string }]);

    // Registered while loopback was allowed; the delivery's connect is refused once it is not.
    const guarded = `/guarded/${a.username}`;
    const second = (await register(a, { url: rx.url(guarded), events: ['subscriber.subscribed'] })).body;
    process.env.WEBHOOK_ALLOW_LOOPBACK = 'false';
    await subscribe(a, [{ email: 'later@x.co' }]);
    const refused = () => sink.map((b) => JSON.parse(b) as { webhookId: string; lastError: string }).filter((m) => m.webhookId === second.id);
    for (let waited = 0; refused().length === 0 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(refused()).toMatchObject([{ lastError: expect.stringContaining('loopback') as string }]);
    expect(rx.requests.filter((r) => r.path === guarded)).toEqual([]);
  });

  it('announces the end of an import (import.finished, from the worker’s success destination) after the changes it made', async () => {
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    const a = await newClient(service);
    await watchChanges(service, a.username);
    const path = `/imports/${a.username}`;
    const hook = (await register(a, { url: rx.url(path), events: ['subscriber.subscribed', 'import.finished'] })).body;
    rx.files.set(`/${a.username}.csv`, 'email\nimp1@x.co\nimp2@x.co\nnot-an-email\n');
    const file = await request<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, { method: 'POST', token: a.token, body: { email_list_id: a.defaultListId, url: rx.url(`/${a.username}.csv`) } });
    expect(file.status).toBe(201);
    // As S3 invokes the worker (asynchronously, with its onSuccess destination).
    const event = { Records: [{ eventVersion: '2.1', eventSource: 'aws:s3', eventName: 'ObjectCreated:Put', s3: { bucket: { name: config.importsBucket }, object: { key: sourceKey(a.username, file.body.id) } } }] };
    expect(await invokeAsync({ id: 'importsWorker', ...jobs.importsWorker }, event)).toEqual([{ key: sourceKey(a.username, file.body.id), outcome: 'done' }]);
    const got = (await rx.delivered(path, 3)).map((r) => verified(hook.secret, r));
    const finished = got.find((e) => e.type === 'import.finished');
    expect(finished).toMatchObject({
      type: 'import.finished',
      client_id: a.username,
      list_id: a.defaultListId,
      email: null,
      source: 'imports',
      data: { file_id: file.body.id, status: 'done', lines_read: 3, created: 2, subscribed: 2, errors: 1 },
    });
    expect(got.filter((e) => e.type === 'subscriber.subscribed').map((e) => e.email).sort()).toEqual(['imp1@x.co', 'imp2@x.co']);
    // A rerun of the finished file ends nothing; the same success record delivered twice (SQS: at least once) keeps the id.
    expect(await invokeAsync({ id: 'importsWorker', ...jobs.importsWorker }, event)).toEqual([{ key: sourceKey(a.username, file.body.id), outcome: 'finished-before' }]);
    const record = { requestContext: { condition: 'Success' }, requestPayload: event, responsePayload: [{ key: sourceKey(a.username, file.body.id), outcome: 'done' }] };
    await sendTo(service.queues!.env.CHANGES_QUEUE_URL, JSON.stringify(record));
    const again = await rx.delivered(path, 4);
    expect(again).toHaveLength(4);
    expect(again[3].headers['webhook-id']).toBe(finished!.id);
  });
});

describe('fair delivery', () => {
  /** A receiver that answers 200 after `delayMs` (until released: then at once), and counts the requests open at once. */
  function slowReceiver(delayMs: number) {
    let released = false;
    const waiting = new Set<() => void>();
    const open = new Map<string, number>();
    /** Requests open at once: in all, and the most to one path (one receiver). */
    const state = { open: 0, maxOpen: 0, maxPerReceiver: 0, answered: 0 };
    const server = http.createServer((req, res) => {
      const path = req.url ?? '';
      open.set(path, (open.get(path) ?? 0) + 1);
      state.maxPerReceiver = Math.max(state.maxPerReceiver, open.get(path)!);
      state.maxOpen = Math.max(state.maxOpen, ++state.open);
      req.resume();
      const answer = () => {
        waiting.delete(answer);
        clearTimeout(timer);
        open.set(path, open.get(path)! - 1);
        state.open--;
        state.answered++;
        res.writeHead(200).end();
      };
      const timer = setTimeout(answer, released ? 0 : delayMs);
      waiting.add(answer);
    });
    return {
      state,
      server,
      url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
      /** Answers everything waiting, and all later requests, at once. */
      release() {
        released = true;
        for (const answer of [...waiting]) answer();
      },
    };
  }

  it("one client's slow receivers and a 2,000-line write do not delay another client's delivery: it arrives before their backlog is through", { timeout: 240_000 }, async () => {
    const slow = slowReceiver(9_000);
    process.env.WEBHOOK_ALLOW_LOOPBACK = 'true';
    await new Promise<void>((done) => slow.server.listen(0, '127.0.0.1', done));
    const [a, b] = await Promise.all([newClient(service), newClient(service)]);
    try {
      await Promise.all([watchChanges(service, a.username), watchChanges(service, b.username)]);
      for (let i = 0; i < 10; i++) expect((await register(a, { url: slow.url(`/a/${i}`), events: ['subscriber.subscribed'] })).status).toBe(201);
      expect((await register(b, { url: rx.url(`/fair/${b.username}`), events: ['subscriber.subscribed'] })).status).toBe(201);
      const lines = Array.from({ length: 2000 }, (_, i) => ({ email: `flood-${i}@a.example` }));
      expect((await subscribe(a, lines)).status).toBe(200);
      // A's deliveries have taken the delivery slots (in AWS and here: 20 invocations) before B writes.
      await vi.waitFor(() => expect(slow.state.maxOpen).toBeGreaterThanOrEqual(20), { timeout: 60_000, interval: 100 });
      expect((await subscribe(b, [{ email: 'quiet@b.example' }])).status).toBe(200);
      const [got] = await rx.delivered(`/fair/${b.username}`, 1, 60_000);
      expect(JSON.parse(got.body)).toMatchObject({ type: 'subscriber.subscribed', email: 'quiet@b.example' });
      // B's delivery came before A's backlog (2,000 events to each of 10 slow receivers) was through, not after it.
      expect(slow.state.answered).toBeLessThan(lines.length * 10);
      // Each of A's receivers: one connection per delivery invocation at most (20 at once), not one per message.
      expect(slow.state.maxPerReceiver).toBeLessThanOrEqual(jobs.webhooksDeliver.trigger.webhookDeliveries.maxConcurrency);
    } finally {
      slow.release();
      const hooks = await request<ApiBody<'webhooksList'>>(hooksUrl(), { token: a.token });
      for (const hook of Array.isArray(hooks.body) ? hooks.body : []) await request(`${hooksUrl()}/${hook.id}`, { method: 'DELETE', token: a.token });
      await service.drain();
      slow.server.closeAllConnections();
      await new Promise<void>((done) => slow.server.close(() => done()));
    }
  });
});

describe('subscriber.deleted (POST /v1/users/delete)', () => {
  type Change = v.InferOutput<typeof ChangeEventSchema>;
  const usersDelete = (client: TestClient, emails: string[]) => request<ErrorBody>(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: emails.map((email) => ({ email })) });
  const byList = (x: Change, y: Change) => (x.list_id ?? 0) - (y.list_id ?? 0);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** A client with gone@x.co (guid g-gone) and stays@x.co on two lists, and a webhook of subscriber.deleted only. */
  async function addressOnTwoLists(prefix: string) {
    const a = await newClient(service);
    await watchChanges(service, a.username);
    const path = `${prefix}/${a.username}`;
    const hook = (await register(a, { url: rx.url(path), events: ['subscriber.deleted'] })).body;
    const second = await createList(a.username, 'Second');
    const lists = [a.defaultListId, second.id].sort((x, y) => x - y);
    for (const listId of lists) {
      const reply = await request(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { method: 'POST', token: a.token, body: [{ email: 'gone@x.co', guid: 'g-gone' }, { email: 'stays@x.co' }] });
      expect(reply.status).toBe(200);
    }
    /** The deliveries to the webhook so far (verified), and the subscriber.deleted events of this client on the local bus. */
    const received = () => rx.requests.filter((r) => r.path === path).map((r) => verified(hook.secret, r));
    const onBus = () => service.queues!.bus.filter((e) => e.DetailType === 'subscriber.deleted' && e.Detail?.includes(`"client_id":"${a.username}"`));
    const recorded = async () => (await rawEventObjects(a.username, 'nl_delete')).flat();
    return { a, path, hook, lists, received, onBus, recorded };
  }

  /** What a delivery of gone@x.co's deletion from `listId` carries. */
  const deletionOf = (clientId: string, listId: number) => ({
    id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) as string,
    type: 'subscriber.deleted',
    time: expect.any(String) as string,
    client_id: clientId,
    list_id: listId,
    email: 'gone@x.co',
    guid: 'g-gone',
    cause: null,
    source: 'subscribers',
    data: {},
  });

  it('sends one signed subscriber.deleted per list the address was on, puts each on the bus; deleting again sends nothing', async () => {
    const { a, path, hook, lists, received, onBus, recorded } = await addressOnTwoLists('/deleted');
    const started = Date.now();
    expect((await usersDelete(a, ['GONE@x.co', 'never-there@x.co'])).status).toBe(200);
    const got = await rx.delivered(path, 2);
    const events = got.map((r) => verified(hook.secret, r));
    expect([...events].sort(byList)).toEqual(lists.map((listId) => deletionOf(a.username, listId)));
    for (const [i, r] of got.entries()) {
      expect(r.headers['webhook-id']).toBe(events[i].id);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(Date.parse(events[i].time)).toBeGreaterThanOrEqual(started - 1000);
      expect(Date.parse(events[i].time)).toBeLessThanOrEqual(Date.now());
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
    // A signature over another body does not verify.
    expect(() => new Webhook(hook.secret).verify(got[0].body.replace('gone@', 'eve@'), got[0].headers)).toThrow();
    // The same changes on the (local) bus: source newsletter-service, detail-type subscriber.deleted, detail the same JSON.
    expect(onBus().map((e) => e.Source)).toEqual(['newsletter-service', 'newsletter-service']);
    expect(onBus().map((e) => JSON.parse(e.Detail!) as Change).sort(byList)).toEqual([...events].sort(byList));

    // Deleting again removes nothing and records nothing.
    expect(await recorded()).toHaveLength(2);
    expect((await usersDelete(a, ['gone@x.co'])).status).toBe(200);
    expect(await recorded()).toHaveLength(2);
    // A later deletion (stays@x.co) comes through; by then (and a second after) nothing more came for gone@x.co.
    expect((await usersDelete(a, ['stays@x.co'])).status).toBe(200);
    await rx.delivered(path, 4);
    await sleep(1000);
    expect(received().map((e) => e.email)).toEqual(['gone@x.co', 'gone@x.co', 'stays@x.co', 'stays@x.co']);
    expect(onBus().map((e) => (JSON.parse(e.Detail!) as Change).email)).toEqual(['gone@x.co', 'gone@x.co', 'stays@x.co', 'stays@x.co']);
  });

  it('a deletion that stops part-way sends the lists it removed; the retry sends the rest: one event per list in all', async () => {
    const { a, path, lists, received, recorded } = await addressOnTwoLists('/deleted-partial');
    // Every deletion on the second list fails with a storage fault that outlasts the retries.
    const send = ddb.send.bind(ddb);
    const failing = keys.subscribersPartition(a.username, lists[1]);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof BatchExecuteStatementCommand && (command.input.Statements ?? []).some((st) => st.Statement?.startsWith('DELETE') && st.Parameters?.[0] === failing)) {
        return Promise.reject(Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }));
      }
      return send(command as never);
    }) as typeof ddb.send);
    const stopped = await usersDelete(a, ['gone@x.co']);
    vi.restoreAllMocks();
    expect(stopped.status).toBe(503);
    expect(stopped.body.cause).toContain(`1 subscription(s) were deleted (from list ${lists[0]})`);
    expect((await rx.delivered(path, 1)).map((r) => (JSON.parse(r.body) as Change).list_id)).toEqual([lists[0]]);

    expect((await usersDelete(a, ['gone@x.co'])).status).toBe(200);
    await rx.delivered(path, 2);
    expect((await usersDelete(a, ['gone@x.co'])).status).toBe(200);
    await sleep(1000);
    expect(received().sort(byList)).toEqual(lists.map((listId) => deletionOf(a.username, listId)));
    expect(await recorded()).toHaveLength(2);
  });
});
