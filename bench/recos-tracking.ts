/**
 * What a page view costs in DynamoDB writes (`npm run bench:recos:tracking`),
 * against DynamoDB Local (in memory, started here), in one run:
 *
 * 1. A realistic mix: 10,000 articles with Zipf-distributed popularity
 *    (s = 1), readers in sessions of several views (1 + geometric, mean 4,
 *    20–120 s apart), arriving at a given rate. The same views are applied
 *    today's way (one by one: `trackPageView`, what POST /v1/track did in the
 *    request) and the queued way (the consumer's `applyViewBatch` over the
 *    batches the event source mapping would form at that rate: up to
 *    `batchSize` views or `maxBatchingWindowSeconds`, whichever comes first).
 *    Write calls and write units (ConsumedCapacity, table and indexes) per
 *    1,000 views are counted by an SDK middleware on the service's client.
 * 2. A hot article: 50,000 views of one article by 50,000 readers (each read
 *    one of 20 other articles a minute before), sent through local gateways
 *    (POST /v1/track, the real handler; each gateway in a worker thread, as
 *    separate containers) by load-generator threads as fast as they take them,
 *    consumed by the real consumer through the local queue (batches, window
 *    and concurrency of the job row). After the queue drains, the article's
 *    count and its co-visits must be exact; every response 200; no message
 *    dead-lettered. Prints the writes on the most written item and its share.
 *
 * Options: --views=20000 (mix, per rate) --per-view=5000 (today's scheme, a
 * prefix of the same stream) --hot=50000 --concurrency=64 (HTTP requests in
 * flight, from --load-workers=2 worker threads) --rates=20,50,200,1000 (views/s;
 * `none`: the hot article only) --gateways=2 --cpu-prof-hot=<file>. Exits 1 when, at 50 views/s or more,
 * the amortised write units per view exceed 4.5 or the write calls per view
 * exceed 2.5 (1.5 until readers were written one conditional PutItem each:
 * the calls of a batch's readers rose from 1 per 25 to 1 per reader, the
 * units did not move; docs/architecture.md "Readers and concurrent
 * batches"), or the hot article is not exact or took more than a minute to send.
 */
import { Worker } from 'node:worker_threads';
import { gatewayThread, startBenchStack } from './local-stack.js';
import { prng } from './recos-data.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const VIEWS = Number(args.get('views') ?? 20_000);
const PER_VIEW = Number(args.get('per-view') ?? 5_000);
const HOT = Number(args.get('hot') ?? 50_000);
const CONCURRENCY = Number(args.get('concurrency') ?? 64);
const RATES = (args.get('rates') ?? '20,50,200,1000').split(',').filter((r) => r !== '' && r !== 'none').map(Number);
const LOAD_WORKERS = Number(args.get('load-workers') ?? 2);
const GATEWAYS = Number(args.get('gateways') ?? 2);

const ARTICLES = 10_000;
const READERS = 200_000;
const SITE = 'gazette.example';

interface Counter {
  calls: Record<string, number>;
  units: number;
  /** Writes per item key (pk|sk): UpdateItem, PutItem, DeleteItem and each BatchWriteItem request. */
  items: Map<string, number>;
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);
const newCounter = (): Counter => ({ calls: {}, units: 0, items: new Map() });
const writeCalls = (c: Counter) => Object.entries(c.calls).filter(([name]) => WRITES.has(name)).reduce((s, [, n]) => s + n, 0);
const allCalls = (c: Counter) => Object.values(c.calls).reduce((s, n) => s + n, 0);
const itemWrites = (c: Counter) => [...c.items.values()].reduce((s, n) => s + n, 0);

interface StreamView {
  userId: string;
  article: number;
  t: number;
}

/** Zipf(1) over `n` ranks: a sampler. */
function zipf(n: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1);
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/**
 * `count` views arriving at `rate` views/s over `count / rate` seconds ending
 * at `end`, from sessions of several views (sessions that began up to 10
 * minutes before the period contribute their later views).
 */
function viewStream(count: number, rate: number, end: number, seed: number): StreamView[] {
  const random = prng(seed);
  const pick = zipf(ARTICLES, random);
  const duration = count / rate;
  const from = end - duration;
  const views: StreamView[] = [];
  while (views.length < count) {
    const userId = `reader-${Math.floor(random() * READERS)}`;
    let t = from - 600 + random() * (duration + 600);
    const length = 1 + Math.floor(-Math.log(1 - random()) * 3);
    const seen = new Set<number>();
    for (let v = 0; v < length && views.length < count; v++) {
      let article = pick();
      for (let tries = 0; seen.has(article) && tries < 10; tries++) article = pick();
      seen.add(article);
      if (t >= from && t < end) views.push({ userId, article, t: Math.floor(t) });
      t += 20 + random() * 100;
    }
  }
  return views.sort((a, b) => a.t - b.t);
}

/** The batches the event source mapping forms: up to `size` views, or those within `windowSeconds` of the first. */
function batchesOf<T extends { t: number }>(views: T[], size: number, windowSeconds: number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  for (const v of views) {
    if (current.length > 0 && (current.length >= size || v.t - current[0].t >= windowSeconds)) {
      out.push(current);
      current = [];
    }
    current.push(v);
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** A load generator thread: POSTs each body once, `concurrency` at a time, and answers the count of each status. */
const LOAD_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, concurrency, bodies } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const statuses = {};
let next = 0;
const post = (body) => new Promise((done, fail) => {
  const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    res.resume();
    res.on('end', () => done(res.statusCode));
  });
  req.on('error', fail);
  req.end(body);
});
(async () => {
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const status = await post(bodies[next++]);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  }));
  agent.destroy();
  parentPort.postMessage(statuses);
})();
`;

async function main() {
  const started = Date.now();
  // One line per request would drown the figures (and slow the gateway): errors only.
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  const stack = await startBenchStack();
  try {
    const { ddb } = await import('../shared/db/client.js');
    const { createClient } = await import('../shared/clients/clients.js');
    const { DynamoStore } = await import('../shared/recos/dynamo-store.js');
    const { recosItems } = await import('../shared/recos/dynamo-items.js');
    const { PerViewDynamoStore } = await import('./per-view-store.js');
    const { DynamoViewStore } = await import('../shared/recos/dynamo-views.js');
    const { trackPageView } = await import('../test/helpers/recos-oracle.js');
    const { applyViewBatch } = await import('../shared/recos/view-batch.js');
    const { jobs } = await import('../shared/jobs.js');
    const { articleGuid } = await import('../shared/recos/urls.js');
    const { batchWrite } = await import('../shared/db/client.js');
    const { batchSize, maxBatchingWindowSeconds, maxConcurrency } = jobs.trackingViews.trigger.trackingQueue;

    let counter = newCounter();
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        const name = context.commandName ?? '?';
        type Key = { pk: string; sk: string };
        const input = args.input as { Key?: Key; Item?: Key; RequestItems?: Record<string, Array<{ PutRequest?: { Item: Key }; DeleteRequest?: { Key: Key } }>>; ReturnConsumedCapacity?: string };
        const write = WRITES.has(name);
        if (write) {
          input.ReturnConsumedCapacity = 'INDEXES';
          const keysOf = (): string[] => {
            if (input.Key) return [`${input.Key.pk}|${input.Key.sk}`];
            if (input.Item) return [`${input.Item.pk}|${input.Item.sk}`];
            if (input.RequestItems) return Object.values(input.RequestItems).flat().map((r) => { const k = (r.PutRequest?.Item ?? r.DeleteRequest?.Key)!; return `${k.pk}|${k.sk}`; });
            return [];
          };
          for (const key of keysOf()) counter.items.set(key, (counter.items.get(key) ?? 0) + 1);
        }
        counter.calls[name] = (counter.calls[name] ?? 0) + 1;
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }).ConsumedCapacity;
        if (write && consumed) for (const c of [consumed].flat()) counter.units += c.CapacityUnits ?? 0;
        return result;
      },
      { step: 'initialize', name: 'benchWriteCounter' },
    );

    const now = Math.floor(Date.now() / 1000);
    const random = prng(11);
    // Articles published 0–60 days ago: about half are within the fresh list's window on their first view.
    const articles = Array.from({ length: ARTICLES }, (_, i) => ({
      url: `https://${SITE}/news/${i}`,
      title: `Article ${i}`,
      category: ['politics', 'sport', 'tech', 'culture'][i % 4],
      themes: [['politics', 'climate'], ['football'], ['ai', 'tech'], ['cinema']][i % 4],
      published: now - Math.floor(random() * 60 * 86_400),
    }));
    const pageView = (v: StreamView) => {
      const a = articles[v.article];
      return { userId: v.userId, url: a.url, title: a.title, category: a.category, themes: a.themes, published: a.published };
    };
    const per1000 = (n: number, views: number) => ((1000 * n) / views).toFixed(0);
    const fmt = (label: string, c: Counter, views: number, batches?: number) =>
      `${label.padEnd(44)} ${per1000(writeCalls(c), views).padStart(7)} ${per1000(c.units, views).padStart(9)} ${per1000(allCalls(c) - writeCalls(c), views).padStart(8)} ${(writeCalls(c) / views).toFixed(2).padStart(10)}${batches ? `   ${batches} batches, ${(views / batches).toFixed(0)} views each` : ''}`;

    console.log(`Page views in DynamoDB writes (DynamoDB Local; consumer job: batchSize ${batchSize}, window ${maxBatchingWindowSeconds} s, maxConcurrency ${maxConcurrency})`);
    console.log(`Realistic mix: ${ARTICLES} articles, Zipf(1) popularity, sessions of 1 + geometric (mean 4) views 20–120 s apart, ${READERS} readers`);
    console.log(`${'scheme'.padEnd(44)} ${'write'.padStart(7)} ${'write'.padStart(9)} ${'read'.padStart(8)} ${'writes'.padStart(10)}`);
    console.log(`${''.padEnd(44)} ${'calls'.padStart(7)} ${'units'.padStart(9)} ${'calls'.padStart(8)} ${'per view'.padStart(10)}`);
    console.log(`${''.padEnd(44)} ${'(per 1,000 views)'.padStart(26)}`);

    const failures: string[] = [];
    const reference = viewStream(VIEWS, 200, now - 3600, 5);
    {
      const { client } = await createClient(`bench-pv-${Date.now().toString(36)}`, { siteHosts: [SITE] });
      const store = new PerViewDynamoStore();
      counter = newCounter();
      const sample = reference.slice(0, PER_VIEW);
      for (const v of sample) await trackPageView(store, client.id, pageView(v), v.t);
      console.log(fmt(`today: one by one in the request (${sample.length} views)`, counter, sample.length));
      if (args.has('detail')) console.log(`    ${Object.entries(counter.calls).map(([n, c]) => `${n.replace('Command', '')} ${per1000(c, sample.length)}`).join(', ')} per 1,000 views`);
    }
    for (const rate of RATES) {
      const stream = rate === 200 ? reference : viewStream(VIEWS, rate, now - 3600, 5);
      const { client } = await createClient(`bench-q${rate}-${Date.now().toString(36)}`, { siteHosts: [SITE] });
      const store = new DynamoViewStore();
      counter = newCounter();
      const batches = batchesOf(stream, batchSize, maxBatchingWindowSeconds);
      let id = 0;
      for (const batch of batches) {
        const result = await applyViewBatch(store, batch.map((v) => ({ id: String(id++), clientId: client.id, view: pageView(v), t: v.t })));
        if (result.failed.length > 0 || result.lostEffects > 0) failures.push(`rate ${rate}: ${result.failed.length} failed, ${result.lostEffects} lost`);
      }
      console.log(fmt(`queued, ${rate} views/s (${stream.length} views)`, counter, stream.length, batches.length));
      if (args.has('detail')) console.log(`    ${Object.entries(counter.calls).map(([n, c]) => `${n.replace('Command', '')} ${per1000(c, stream.length)}`).join(', ')} per 1,000 views`);
      if (rate >= 50 && writeCalls(counter) / stream.length > 2.5) failures.push(`${rate} views/s: ${(writeCalls(counter) / stream.length).toFixed(2)} write calls per view (bound 2.5)`);
      if (rate >= 50 && counter.units / stream.length > 4.5) failures.push(`${rate} views/s: ${(counter.units / stream.length).toFixed(2)} write units per view (bound 4.5)`);
    }
    console.log('(today: POST /v1/track made all of these calls in the request; queued: the request makes 1 SQS SendMessage and, in the first request of a container for the key (then kept 30 s), 2 DynamoDB reads; the rest is the consumer)');

    // Scenario 2: one hot article through the gateway.
    console.log('');
    if (HOT === 0) return;
    const { client } = await createClient(`bench-hot-${Date.now().toString(36)}`, { siteHosts: [SITE] });
    const others = articles.slice(1, 21);
    const hot = articles[0];
    const readerCount = HOT;
    // Each reader read one of 20 other articles a minute ago (loaded directly, not counted).
    const before = Math.floor(Date.now() / 1000) - 60;
    const expected = new Map<string, number>();
    const readers = Array.from({ length: readerCount }, (_, i) => {
      const other = others[i % others.length];
      expected.set(articleGuid(other.url), (expected.get(articleGuid(other.url)) ?? 0) + 1);
      return { userId: `hot-reader-${i}`, reads: [{ g: articleGuid(other.url), t: before }], tastes: {}, lastSeen: before };
    });
    await batchWrite(readers.map((r) => ({ PutRequest: { Item: recosItems.reader(client.id, r) } })));
    counter = newCounter();
    const batchesBefore = stack.queues.queues.get('trackingViews')!.batches.length;
    const statuses = new Map<number, number>();
    const gateways = await Promise.all(Array.from({ length: GATEWAYS }, () => gatewayThread()));
    // --cpu-prof-hot=<file>: a CPU profile of this process (gateway, handlers, local queue, consumer) while the views are sent.
    const profiler = args.has('cpu-prof-hot') ? new (await import('node:inspector/promises')).Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const t0 = performance.now();
    // The HTTP client runs in worker threads (its own event loops, on the other core), not on the gateway's event loop:
    // in AWS the readers' browsers are not in the Lambda either. Each worker sends its share, CONCURRENCY in flight in all.
    const body = (i: number) => ({ user_id: `hot-reader-${i}`, url: hot.url, title: hot.title, themes: hot.themes, category: hot.category, published_time: hot.published });
    const results = await Promise.all(
      Array.from({ length: LOAD_WORKERS }, (_, w) => {
        const from = Math.floor((w * readerCount) / LOAD_WORKERS);
        const to = Math.floor(((w + 1) * readerCount) / LOAD_WORKERS);
        const worker = new Worker(LOAD_WORKER, {
          eval: true,
          workerData: { url: `${gateways[w % gateways.length].url}/v1/track/${client.trackingKey}`, concurrency: Math.ceil(CONCURRENCY / LOAD_WORKERS), bodies: Array.from({ length: to - from }, (_, k) => JSON.stringify(body(from + k))) },
        });
        return new Promise<Record<number, number>>((done, fail) => {
          worker.once('message', done);
          worker.once('error', fail);
        });
      }),
    );
    for (const counts of results) for (const [status, n] of Object.entries(counts)) statuses.set(Number(status), (statuses.get(Number(status)) ?? 0) + n);
    const sentSeconds = (performance.now() - t0) / 1000;
    await Promise.all(gateways.map((g) => g.stop()));
    if (profiler) (await import('node:fs')).writeFileSync(args.get('cpu-prof-hot')!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    await stack.queues.drain();
    const drainedSeconds = (performance.now() - t0) / 1000;
    const queue = stack.queues.queues.get('trackingViews')!;
    const batches = queue.batches.slice(batchesBefore);
    const store = new DynamoStore();
    const [article] = await store.articles(client.id, [articleGuid(hot.url)]);
    const { covisits } = await store.context(client.id, { guid: articleGuid(hot.url), covisits: true });
    let reverseExact = true;
    for (const other of others) {
      const { covisits: back } = await store.context(client.id, { guid: articleGuid(other.url), covisits: true });
      if (back?.[articleGuid(hot.url)] !== expected.get(articleGuid(other.url))) reverseExact = false;
    }
    const covisitsExact = [...expected].every(([g, n]) => covisits?.[g] === n) && Object.keys(covisits ?? {}).length === expected.size;
    const ok = statuses.get(200) ?? 0;
    const top = [...counter.items].sort((a, b) => b[1] - a[1]).slice(0, 3);
    const total = itemWrites(counter);
    console.log(`Hot article: ${readerCount} views of one article by ${readerCount} readers (each read one of ${others.length} other articles a minute before), through ${GATEWAYS} local gateways (worker threads), ${CONCURRENCY} requests in flight from ${LOAD_WORKERS} load-generator threads`);
    console.log(`  sent in ${sentSeconds.toFixed(1)} s (${(readerCount / sentSeconds).toFixed(0)} views/s); queue drained ${drainedSeconds.toFixed(1)} s after the first view; responses: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}`);
    console.log(`  consumer: ${batches.length} batches (largest ${Math.max(...batches)}, mean ${(batches.reduce((s, n) => s + n, 0) / Math.max(1, batches.length)).toFixed(0)} views), dead-lettered ${queue.deadLetters.length}`);
    console.log(`  article views ${article?.views} (expected ${readerCount}); co-visits of the article ${covisitsExact ? 'exact' : 'NOT exact'} (${others.length} neighbours, ${readerCount} pairs), and back ${reverseExact ? 'exact' : 'NOT exact'}`);
    console.log(`  writes: ${writeCalls(counter)} write calls (${(writeCalls(counter) / readerCount).toFixed(3)} per view), ${counter.units.toFixed(0)} write units (${(counter.units / readerCount).toFixed(2)} per view), ${total} item writes (BatchWriteItem requests counted one by one)`);
    console.log(`  most written items: ${top.map(([k, n]) => `${k.replace(/^ART#[^#]+#/, 'ART#…#').replace(/^RDR#[^#]+#/, 'RDR#…#')} ${n} (${((100 * n) / total).toFixed(2)}%)`).join('; ')}`);
    console.log(`  bound: an item is written at most twice per batch (one update, one index fix-up when batches race), so the hot article takes ≤ 2 × batches = ${2 * batches.length} writes here; today's scheme would write it 2 × ${readerCount} = ${2 * readerCount} times (UpdateItem + index update per view)`);
    const hotWrites = counter.items.get(`ART#${client.id}#${articleGuid(hot.url)}|ART`) ?? 0;
    if (hotWrites > 2 * batches.length) failures.push(`hot article item written ${hotWrites} times for ${batches.length} batches`);
    if (sentSeconds > 60) failures.push(`hot article: ${readerCount} views sent in ${sentSeconds.toFixed(1)} s (target: within a minute)`);
    if (ok !== readerCount) failures.push(`hot article: ${readerCount - ok} requests not answered 200`);
    if (article?.views !== readerCount || !covisitsExact || !reverseExact) failures.push('hot article: counts or co-visits not exact');
    if (queue.deadLetters.length > 0) failures.push(`${queue.deadLetters.length} messages dead-lettered`);
    console.log(`\nRun took ${((Date.now() - started) / 1000).toFixed(0)} s`);
    if (failures.length > 0) {
      console.error(`FAIL: ${failures.join('; ')}`);
      process.exitCode = 1;
    }
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
