/**
 * Page views off the request path: POST /v1/track queues each view (SQS,
 * locally infra/local/queues.ts behind the real SQS client) and the
 * trackingViews job applies them in batches. DynamoDB calls are counted by a
 * middleware on the service's client (the gateway and the consumer run in
 * this process); a fault is injected the same way.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSignedIds, setSiteHosts } from '../../shared/clients/clients.js';
import { TRACKING_KEY_CACHE_SECONDS } from '../../shared/recos/service.js';
import { ddb } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { DynamoStore } from '../../shared/recos/dynamo-store.js';
import { DynamoViewStore } from '../../shared/recos/dynamo-views.js';
import { applyViewBatch } from '../../shared/recos/view-batch.js';
import { POLLERS } from '../../infra/local/queues.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type TestClient, type ErrorBody } from '../helpers/service.js';
import { monotonicAhead } from '../helpers/clock.js';

const service = useService();
const site = () => `https://news-${randomUUID().slice(0, 8)}.queue.example`;
const track = (client: TestClient, userId: string, url: string) => request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: userId, url, title: `About ${url}` } });

interface Call {
  name: string;
  key?: string;
}
let calls: Call[] = [];
let fault: ((call: Call) => Error | undefined) | undefined;
ddb.middlewareStack.add(
  (next, context) => async (args) => {
    const input = args.input as { Key?: { pk: string; sk: string }; Item?: { pk: string; sk: string } };
    const key = input.Key ?? input.Item;
    const call = { name: context.commandName ?? '?', key: key ? `${key.pk}|${key.sk}` : undefined };
    calls.push(call);
    const error = fault?.(call);
    if (error) throw error;
    return next(args);
  },
  { step: 'initialize', name: 'testCallLog' },
);
afterEach(() => {
  fault = undefined;
});
const articleKey = (clientId: string, url: string) => {
  const k = keys.article(clientId, articleGuid(url));
  return `${k.pk}|${k.sk}`;
};
const queue = () => service.queues!.queues.get('trackingViews')!;

describe('POST /v1/track: a container keeps the key and its client record', () => {
  // The copy's age is read on the monotonic clock (the container's life), not the wall clock.
  const later = (seconds: number) => monotonicAhead(seconds * 1000);

  it('a host removed by set-hosts, or signed ids turned on, refuse tracking within TRACKING_KEY_CACHE_SECONDS', async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example', 'gone.example'] });
    expect((await track(client, 'r1', 'https://gone.example/a')).status).toBe(200);
    await setSiteHosts(client.username, ['*.queue.example']);
    await setSignedIds(client.username, true);
    // Still the copy: the documented bound, not longer.
    expect((await track(client, 'r1', 'https://gone.example/a')).status).toBe(200);
    let clock = later(TRACKING_KEY_CACHE_SECONDS - 1);
    try {
      expect((await track(client, 'r1', 'https://gone.example/a')).status).toBe(200);
    } finally {
      clock.mockRestore();
    }
    clock = later(TRACKING_KEY_CACHE_SECONDS);
    try {
      // An anonymous reader id (needs no signature), so the host rule answers.
      const gone = await track(client, `anon-${'0'.repeat(32)}`, 'https://gone.example/a');
      expect(gone.status, gone.text).toBe(403);
      expect((gone.body as ErrorBody).cause).toMatch(/not one of the client's site hosts/);
      const unsigned = await track(client, 'r1', `${site()}/a`);
      expect(unsigned.status, unsigned.text).toBe(403);
      expect((unsigned.body as ErrorBody).cause).toMatch(/requires signed reader ids/);
    } finally {
      clock.mockRestore();
    }
  });

  it("keeps the copy for the container's life, whatever the wall clock does (it steps; the week replay runs it thousands of times fast)", async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example'] });
    await service.drain();
    calls = [];
    expect((await track(client, 'r1', `${site()}/a`)).status).toBe(200);
    expect(calls.map((c) => c.name)).toEqual(['GetItemCommand', 'GetItemCommand']);
    calls = [];
    const wall = Date.now() + 3 * 3600_000;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => wall);
    try {
      expect((await track(client, 'r2', `${site()}/b`)).status).toBe(200);
    } finally {
      clock.mockRestore();
    }
    expect(calls).toEqual([]);
  });

  it('an unknown key is not kept: 404 each time, read again each time', async () => {
    // Views queued by other tests are applied first: only this request's calls are counted.
    await service.drain();
    const url = `${service.url}/v1/track/nope-${randomUUID()}`;
    for (let i = 0; i < 2; i++) {
      calls = [];
      const reply = await request(url, { method: 'POST', body: { user_id: 'r', url: 'https://x.queue.example/a' } });
      expect(reply.status).toBe(404);
      expect(calls.map((c) => c.name)).toEqual(['GetItemCommand']);
    }
  });
});

describe('POST /v1/track: the view is queued, the consumer applies it in batches', () => {
  it('answers after two DynamoDB reads (the key, the client), none while the container keeps them, and no write; nothing is applied before the queue delivers it', async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example'] });
    const url = `${site()}/a`;
    await service.drain();
    calls = [];
    expect((await track(client, 'r1', url)).status).toBe(200);
    expect(calls.map((c) => c.name)).toEqual(['GetItemCommand', 'GetItemCommand']);
    calls = [];
    expect((await track(client, 'r2', url)).status).toBe(200);
    expect(calls).toEqual([]);
    // The batching window (5 s) has not passed: nothing applied yet.
    expect(await new DynamoStore().articles(client.username, [articleGuid(url)])).toEqual([]);
    await service.drain();
    const [article] = await new DynamoStore().articles(client.username, [articleGuid(url)]);
    expect(article).toMatchObject({ views: 2, title: `About ${url}` });
  });

  it('turns N views of one article in a batch into one update of that article, one co-visit update per item and one reader write per reader, exact', async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example'] });
    const s = site();
    const [a, b] = [`${s}/a`, `${s}/b`];
    // 10 of the 30 readers read b, then (a batch later) all 30 read a: a is the more popular.
    await Promise.all(Array.from({ length: 10 }, (_, i) => track(client, `r${i}`, b)));
    await service.drain();
    calls = [];
    const batchesBefore = queue().batches.length;
    // One poller, so that the 30 views come in one batch (SQS would spread them over Lambda's five pollers).
    queue().pollers = 1;
    try {
      const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => track(client, `r${i}`, a)));
      expect(replies.every((r) => r.status === 200)).toBe(true);
      await service.drain();
    } finally {
      queue().pollers = POLLERS;
    }
    expect(queue().batches.slice(batchesBefore)).toEqual([30]);
    const writesOn = (key: string) => calls.filter((c) => c.key === key && c.name === 'UpdateItemCommand').length;
    expect(writesOn(articleKey(client.username, a))).toBe(1);
    const covisitKey = (url: string) => `${keys.covisits(client.username, articleGuid(url)).pk}|COVISIT`;
    expect(writesOn(covisitKey(a))).toBe(1);
    expect(writesOn(covisitKey(b))).toBe(1);
    // One conditional PutItem per reader (a reader is written only at the version read: docs/architecture.md "Readers and concurrent batches").
    expect(calls.filter((c) => c.name === 'PutItemCommand' && c.key?.endsWith('|READS'))).toHaveLength(30);
    const store = new DynamoStore();
    const [article] = await store.articles(client.username, [articleGuid(a)]);
    expect(article.views).toBe(30);
    expect((await store.context(client.username, { guid: articleGuid(a), covisits: true })).covisits).toEqual({ [articleGuid(b)]: 10 });
    expect((await store.context(client.username, { guid: articleGuid(b), covisits: true })).covisits).toEqual({ [articleGuid(a)]: 10 });
    const [hottest] = await store.hotArticles(client.username, 1);
    expect(hottest.guid).toBe(article.guid);
    expect(hottest.hot).toBeCloseTo(article.hot, 6);
  });

  it('delivers again the views whose article update failed, and counts every view once (partial batch response)', async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example'] });
    const s = site();
    const [a, b] = [`${s}/throttled`, `${s}/fine`];
    let failures = 0;
    fault = (call) => {
      if (call.name !== 'UpdateItemCommand' || call.key !== articleKey(client.username, a) || failures >= 2) return undefined;
      failures++;
      return Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } });
    };
    const batchesBefore = queue().batches.length;
    queue().pollers = 1;
    try {
      await Promise.all([...Array.from({ length: 5 }, (_, i) => track(client, `r${i}`, a)), ...Array.from({ length: 4 }, (_, i) => track(client, `q${i}`, b))]);
      await service.drain();
    } finally {
      queue().pollers = POLLERS;
    }
    expect(failures).toBe(2);
    // The first batch of 9, then the 5 views of the failed article twice more (the second attempt failed too).
    expect(queue().batches.slice(batchesBefore)).toEqual([9, 5, 5]);
    const counted = Object.fromEntries((await new DynamoStore().articles(client.username, [articleGuid(a), articleGuid(b)])).map((x) => [x.url, x.views]));
    expect(counted).toEqual({ [a]: 5, [b]: 4 });
    expect(queue().deadLetters).toEqual([]);
  });

  it('puts the first views of 400 new articles in one batch on the fresh list (regression: one fresh-list write of 400 entries exceeded the 4 KB expression limit)', async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example'] });
    const s = site();
    const now = Math.floor(Date.now() / 1000);
    const batch = Array.from({ length: 400 }, (_, i) => ({ id: String(i), clientId: client.username, view: { userId: `r${i}`, url: `${s}/new-${i}`, published: now - 3600 }, t: now }));
    const result = await applyViewBatch(new DynamoViewStore(), batch);
    expect(result).toMatchObject({ counted: 400, fresh: 400, lostEffects: 0, failed: [] });
    const { fresh } = await new DynamoStore().context(client.username, { fresh: true });
    expect(fresh).toHaveLength(400);
  });

  it('a batch with less time than it needs answers before its timeout: views whose article update did not start are delivered again, and every view counts exactly once', async () => {
    const client = await newClient(service, { siteHosts: ['*.queue.example'] });
    const s = site();
    const now = Math.floor(Date.now() / 1000);
    const records = Array.from({ length: 1500 }, (_, i) => ({ messageId: `m${i}`, body: JSON.stringify({ v: 1, clientId: client.username, t: now, view: { userId: `r${i % 300}`, url: `${s}/a${i}` } }) }));
    const { handler } = (await import('../../functions/tracking-views.js')) as { handler: (e: unknown, c: unknown) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }>; deferred: number; counted: number }> };
    const { context } = await import('../../infra/local/jobs.js');
    // 6 s: a reserve of 5 s, a third of the rest for article updates; the whole batch would take longer than that here.
    const first = await handler({ Records: records }, context('trackingViews', 6));
    expect(first.deferred).toBeGreaterThan(0);
    expect(first.batchItemFailures).toHaveLength(first.deferred);
    expect(first.counted).toBe(1500 - first.deferred);
    const failed = new Set(first.batchItemFailures.map((f) => f.itemIdentifier));
    const again = await handler({ Records: records.filter((r) => failed.has(r.messageId)) }, context('trackingViews', 60));
    expect(again.batchItemFailures).toEqual([]);
    const articles = await new DynamoStore().articles(client.username, records.map((_, i) => articleGuid(`${s}/a${i}`)));
    expect(articles).toHaveLength(1500);
    expect(articles.filter((a) => a.views !== 1)).toEqual([]);
  });

  it('dead-letters a message that is not a page view after maxReceiveCount receives', async () => {
    const sqs = new SQSClient({});
    const deadBefore = queue().deadLetters.length;
    await sqs.send(new SendMessageCommand({ QueueUrl: process.env.TRACKING_QUEUE_URL, MessageBody: '{"v":99}' }));
    await service.drain();
    expect(queue().deadLetters.slice(deadBefore).map((m) => [m.body, m.receiveCount])).toEqual([['{"v":99}', 5]]);
    sqs.destroy();
  });
});
