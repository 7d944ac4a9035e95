/**
 * Replays a page-view log through the real path and measures the
 * recommendations leave-last-out (the realistic quality benchmark and
 * `npm run evaluate`):
 *
 * 1. A fresh local stack (DynamoDB Local in memory, the local gateway in a
 *    worker thread, the local tracking queue and its consumer here or, with
 *    `consumerThread`, in another worker thread; bench/local-stack.ts), a client
 *    with the log's site hosts and a block with default settings.
 * 2. Split: for `evalReaders` readers with at least two views (a seeded
 *    sample), the last view is held out; every other view trains.
 * 3. The training views go to `POST /v1/track` in log order, `concurrency`
 *    in flight (the service dates them itself: only the order is the log's);
 *    then the tracking queue drains.
 * 4. Each held-out reader asks `GET …/recommendations?rows=10` with the page
 *    they read last (`page_url`); a hit is the held-out article among the 10.
 *
 * Reported for the service and, on the same split, two baselines computed
 * here offline from the training views: most-read (the most viewed articles
 * the reader has not read) and plain item co-visitation (articles read by
 * the same readers as the current page, counted over all pairs of each
 * reader's history, ties and the rest of the 10 filled by most-read):
 * hit rate@10, nDCG@10, MRR@10 and catalogue coverage (distinct articles
 * recommended over the articles in the log).
 */
import http from 'node:http';
import { articleGuid, canonicalUrl } from '../shared/recos/urls.js';
import { prng } from './recos-data.js';
import { gatewayThread, startBenchStack } from './local-stack.js';

export const K = 10;

export interface LogView {
  reader: string;
  url: string;
  /** Order only (Unix seconds). */
  t: number;
  title?: string;
  desc?: string;
  category?: string;
  themes?: string[];
  published?: number;
}

export interface Metrics {
  hitRate: number;
  ndcg: number;
  mrr: number;
  coverage: number;
}

export interface ReplayResult {
  trainViews: number;
  sendSeconds: number;
  viewsPerSecond: number;
  drainSeconds: number;
  evaluated: number;
  /** Share of the held-out readers' training reads found on their reader items after the replay. */
  readsKept: number;
  service: Metrics;
  mostRead: Metrics;
  covisitation: Metrics;
  /** Share of the service's answers per `algo` value. */
  algos: Map<string, number>;
  statuses: Map<number, number>;
}

export interface ReplayOptions {
  evalReaders: number;
  concurrency: number;
  seed: number;
  /** Block settings of the measured block (weights etc.); defaults otherwise. */
  block?: Record<string, unknown>;
  /** Held out: only readers whose last view is at most this many seconds before the log's last (clicks at the end). */
  recentSeconds?: number;
  /**
   * Dates each view by its log time: called with `t` as the view is sent
   * (in log order), it sets this process's clock (bench/sim-clock.ts), which
   * the handlers and the queue run on. Without it the service dates views by
   * the replay's own clock, and a week replays as three minutes.
   */
  logTime?: (t: number) => void;
  /** With `logTime`: the simulated clock's memory (bench/sim-clock.ts `simClockBuffer`), which the gateway's thread follows. */
  simClock?: SharedArrayBuffer;
  /** Seconds of DynamoDB Local warm-up before the timed replay ({@link warmUpDynamo}; default 15, 0 for none). */
  warmUpSeconds?: number;
  /** Counts the consumer's DynamoDB calls (bench/ddb-meter.ts on its client: the replay and the drain) and prints them per view. */
  meter?: boolean;
  /**
   * The consumer in a worker thread of its own (bench/job-thread.ts) instead of this one (beside the load and the queue):
   * shows what the request path alone sustains; the consumer then falls behind on 2 cores and the queue drains long after
   * the replay (docs/benchmarks.md#recommendation-quality).
   */
  consumerThread?: boolean;
  log?: (line: string) => void;
}

interface Held {
  reader: string;
  /** The page they read last in the training views. */
  page: string;
  /** Guid of the held-out article. */
  target: string;
  read: Set<string>;
}

/** Leave-last-out split: the last view of `n` readers with at least two distinct articles read (seeded sample). */
export function split(views: LogView[], n: number, seed: number, o: { recentSeconds?: number } = {}): { train: LogView[]; held: Held[] } {
  const byReader = new Map<string, number[]>();
  views.forEach((v, i) => {
    const list = byReader.get(v.reader) ?? [];
    list.push(i);
    byReader.set(v.reader, list);
  });
  // With `recentSeconds`, only readers whose last view is that recent (held-out clicks at the end of the log, as a reader asks now).
  const last = views.reduce((m, v) => Math.max(m, v.t), -Infinity);
  const eligible = [...byReader].filter(
    ([, idx]) =>
      new Set(idx.map((i) => articleGuid(views[i].url))).size >= 2 &&
      articleGuid(views[idx[idx.length - 1]].url) !== articleGuid(views[idx[idx.length - 2]].url) &&
      (o.recentSeconds === undefined || views[idx[idx.length - 1]].t >= last - o.recentSeconds),
  );
  const random = prng(seed);
  for (let i = eligible.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [eligible[i], eligible[j]] = [eligible[j], eligible[i]];
  }
  const chosen = eligible.slice(0, n);
  const out = new Set<number>();
  const held: Held[] = chosen.map(([reader, idx]) => {
    const last = idx[idx.length - 1];
    out.add(last);
    const before = idx.slice(0, -1);
    return { reader, page: views[before[before.length - 1]].url, target: articleGuid(views[last].url), read: new Set(before.map((i) => articleGuid(views[i].url))) };
  });
  return { train: views.filter((_, i) => !out.has(i)), held };
}

/** Metrics of ranked guid lists against one target each. */
export function metrics(lists: Array<{ ranked: string[]; target: string }>, catalogue: number): Metrics {
  let hits = 0;
  let ndcg = 0;
  let mrr = 0;
  const shown = new Set<string>();
  for (const { ranked, target } of lists) {
    const top = ranked.slice(0, K);
    top.forEach((g) => shown.add(g));
    const rank = top.indexOf(target);
    if (rank < 0) continue;
    hits++;
    ndcg += 1 / Math.log2(rank + 2);
    mrr += 1 / (rank + 1);
  }
  const n = Math.max(1, lists.length);
  return { hitRate: hits / n, ndcg: ndcg / n, mrr: mrr / n, coverage: shown.size / Math.max(1, catalogue) };
}

/** The offline baselines' rankings, from the training views. */
export function offlineBaselines(train: LogView[], held: Held[]): { mostRead: string[][]; covisitation: string[][] } {
  const counts = new Map<string, number>();
  const histories = new Map<string, string[]>();
  for (const v of train) {
    const g = articleGuid(v.url);
    counts.set(g, (counts.get(g) ?? 0) + 1);
    const h = histories.get(v.reader) ?? [];
    if (!h.includes(g)) h.push(g);
    histories.set(v.reader, h);
  }
  const popular = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([g]) => g);
  const pairs = new Map<string, Map<string, number>>();
  for (const h of histories.values()) {
    for (let i = 0; i < h.length; i++) {
      for (let j = 0; j < h.length; j++) {
        if (i === j) continue;
        const m = pairs.get(h[i]) ?? new Map<string, number>();
        m.set(h[j], (m.get(h[j]) ?? 0) + 1);
        pairs.set(h[i], m);
      }
    }
  }
  const rank = new Map(popular.map((g, i) => [g, i]));
  const fill = (first: string[], h: Held) => {
    const out: string[] = [];
    for (const g of [...first, ...popular]) {
      if (out.length >= K) break;
      if (h.read.has(g) || g === articleGuid(h.page) || out.includes(g)) continue;
      out.push(g);
    }
    return out;
  };
  return {
    mostRead: held.map((h) => fill([], h)),
    covisitation: held.map((h) => {
      const neighbours = [...(pairs.get(articleGuid(h.page)) ?? new Map<string, number>())]
        .sort((a, b) => b[1] - a[1] || rank.get(a[0])! - rank.get(b[0])!)
        .map(([g]) => g);
      return fill(neighbours, h);
    }),
  };
}

async function pool<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i], i);
      }
    }),
  );
}

/**
 * The load generator's HTTP client: plain node:http on keep-alive connections
 * (`sockets` at most), for one phase (`close` ends its connections). It is not
 * the service: fetch (undici, web streams) takes a noticeable share of the
 * CPU of the machine that also runs the service, DynamoDB Local and the queue
 * (docs/benchmarks.md#recommendation-quality).
 */
export function loadClient(base: string, sockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const { hostname, port } = new URL(base);
  const send = (method: 'GET' | 'POST', path: string, body?: string) =>
    new Promise<{ status: number; text: string }>((done, fail) => {
      const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      const req = http.request({ agent, hostname, port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/** Replays `views` through a fresh local stack and measures the service against the offline baselines. */
export async function replayAndEvaluate(views: LogView[], o: ReplayOptions): Promise<ReplayResult> {
  const log = o.log ?? ((line: string) => console.log(line));
  const canonical = views.flatMap((v) => {
    const url = canonicalUrl(v.url);
    return url ? [{ ...v, url }] : [];
  });
  if (canonical.length < views.length) log(`  ${views.length - canonical.length} views without an absolute http(s) URL left out`);
  const { train, held } = split(canonical, o.evalReaders, o.seed, { recentSeconds: o.recentSeconds });
  const catalogue = new Set(canonical.map((v) => articleGuid(v.url))).size;
  const hosts = [...new Set(canonical.map((v) => new URL(v.url).hostname))];
  // The handlers' Powertools logs (one line per warning) would bury the report.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  // The handlers run in a thread of their own, the tracking queue's consumer in this one (or, with `consumerThread`, in
  // another): in AWS they are separate functions, and on one event loop with the load and the consumer the replay measured
  // the loop, not the path.
  const stack = await startBenchStack(o.consumerThread ? { jobsInThread: { simClock: o.simClock, meter: o.meter } } : {});
  // Without the job thread, this thread's client is the consumer's (the handlers' is in the gateway's thread).
  const metered = o.meter && !o.consumerThread ? (await import('./ddb-meter.js')).meter((await import('../shared/db/client.js')).ddb as never) : undefined;
  const gateway = await gatewayThread({ simClock: o.simClock });
  try {
    const { createBlock, createClient } = await import('../shared/clients/clients.js');
    const clientId = `eval-${Date.now().toString(36)}`;
    metered?.enable(false);
    const { client } = await createClient(clientId, { siteHosts: hosts.slice(0, 50) });
    const blockKey = await createBlock(clientId, o.block ?? {});
    const statuses = new Map<number, number>();
    const load = loadClient(gateway.url, o.concurrency);
    if (o.warmUpSeconds !== 0) log(`  DynamoDB Local warmed up: ${await warmUpDynamo((o.warmUpSeconds ?? WARM_UP_SECONDS) * 1000)} calls`);
    metered?.enable(true);
    const t0 = performance.now();
    await pool(train, o.concurrency, async (v) => {
      o.logTime?.(v.t);
      const res = await load.send(
        'POST',
        `/v1/track/${client.trackingKey}`,
        JSON.stringify({
          user_id: v.reader,
          url: v.url,
          ...(v.title ? { title: v.title } : {}),
          ...(v.desc ? { description: v.desc } : {}),
          ...(v.category ? { category: v.category } : {}),
          ...(v.themes?.length ? { themes: v.themes } : {}),
          ...(v.published !== undefined ? { published_time: v.published } : {}),
        }),
      );
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    });
    const sendSeconds = (performance.now() - t0) / 1000;
    load.close();
    const t1 = performance.now();
    await stack.queues.drain();
    const drainSeconds = (performance.now() - t1) / 1000;
    metered?.enable(false);
    const report = metered ? metered.report(train.length, 'view') : o.meter ? await stack.jobs!.report(train.length, 'view') : [];
    for (const line of report) log(`  consumer ${line}`);
    await askLater(clientId, train, o.logTime);
    log(`  replayed ${train.length} views in ${sendSeconds.toFixed(1)} s (${(train.length / sendSeconds).toFixed(0)} views/s, ${o.concurrency} in flight), queue drained ${drainSeconds.toFixed(1)} s later (all applied at ${(train.length / (sendSeconds + drainSeconds)).toFixed(0)} views/s end to end); responses ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}`);

    // What the consumer kept: the held-out readers' training reads on their reader items, and their pages' co-read items.
    const { batchGet } = await import('../shared/db/client.js');
    const { keys } = await import('../shared/db/keys.js');
    const readers = await batchGet<{ userId: string; reads: Array<{ g: string }> }>(held.map((h) => keys.reader(clientId, h.reader)));
    const stored = new Map(readers.map((r) => [r.userId, new Set(r.reads.map((x) => x.g))]));
    const expected = held.reduce((n, h) => n + h.read.size, 0);
    const kept = held.reduce((n, h) => n + [...h.read].filter((g) => stored.get(h.reader)?.has(g)).length, 0);
    const pages = [...new Set(held.map((h) => articleGuid(h.page)))];
    const covisitItems = await batchGet<Record<string, unknown>>(pages.map((g) => keys.covisits(clientId, g)));
    const readsKept = kept / Math.max(1, expected);
    log(`  the consumer kept ${kept} of the held-out readers' ${expected} training reads (${(readsKept * 100).toFixed(1)} %); ${covisitItems.length} of their ${pages.length} pages have co-reads`);

    const answers = new Array<string[]>(held.length);
    const algos = new Map<string, number>();
    const asks = loadClient(gateway.url, 8);
    await pool(held, 8, async (h, i) => {
      const res = await asks.send('GET', `/v1/clients/${blockKey}/users/${encodeURIComponent(h.reader)}/recommendations?rows=${K}&page_url=${encodeURIComponent(h.page)}`);
      const body = JSON.parse(res.text) as { algo?: string; result?: { recommendation: Array<{ guid: string }> } };
      if (res.status !== 200) throw new Error(`recommendations answered ${res.status}: ${JSON.stringify(body)}`);
      answers[i] = body.result!.recommendation.map((r) => r.guid);
      algos.set(body.algo ?? '?', (algos.get(body.algo ?? '?') ?? 0) + 1);
    });
    asks.close();
    const baselines = offlineBaselines(train, held);
    const score = (lists: string[][]) =>
      metrics(
        lists.map((ranked, i) => ({ ranked, target: held[i].target })),
        catalogue,
      );
    return {
      trainViews: train.length,
      sendSeconds,
      viewsPerSecond: train.length / sendSeconds,
      drainSeconds,
      evaluated: held.length,
      readsKept,
      service: score(answers),
      mostRead: score(baselines.mostRead),
      covisitation: score(baselines.covisitation),
      algos,
      statuses,
    };
  } finally {
    await gateway.stop();
    await stack.stop();
  }
}

/** Default length of the warm-up ({@link warmUpDynamo}), seconds. */
const WARM_UP_SECONDS = 15;

/**
 * Warms DynamoDB Local's JVM up before the timed replay, as bench:subscribers
 * does: its first calls of each kind run interpreted and compiling (slower),
 * and on 2 cores its compiler threads take CPU from the replay;
 * DynamoDB in AWS has no such start. For `ms`, 16 at once, on scratch items
 * of their own partition (no service code, no client of the replay, no clock
 * moved): the calls the consumer and the requests make — UpdateItem ADDs
 * returning the item, conditional PutItems, BatchWriteItem, BatchGetItem, a
 * Query on gsi1. Returns the number of calls.
 */
async function warmUpDynamo(ms: number): Promise<number> {
  const { BatchGetCommand, BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
  const { ddb, tableName } = await import('../shared/db/client.js');
  const TableName = tableName();
  const key = (i: number) => ({ pk: `WARMUP#${i % 500}`, sk: 'W' });
  const end = performance.now() + ms;
  let calls = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, worker) => {
      for (let i = worker; performance.now() < end; i += 16) {
        const names = Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`#c${k}`, `n_${(i * 7 + k) % 300}`]));
        const values = Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`:c${k}`, 1]));
        const sends = [
          ddb.send(new UpdateCommand({ TableName, Key: key(i), UpdateExpression: `SET gsi1pk = :g, gsi1sk = :s ADD ${Object.keys(names).map((n, k) => `${n} :c${k}`).join(', ')}`, ExpressionAttributeNames: names, ExpressionAttributeValues: { ...values, ':g': 'WARMUPHOT', ':s': String(i).padStart(9, '0') }, ReturnValues: 'ALL_NEW' })),
          ddb.send(new PutCommand({ TableName, Item: { pk: `WARMUPR#${i}`, sk: 'R', reads: [{ g: 'a', t: i }], rv: 1 }, ConditionExpression: 'attribute_not_exists(pk)' })).catch(() => undefined),
          ddb.send(new BatchWriteCommand({ RequestItems: { [TableName]: Array.from({ length: 25 }, (_, k) => ({ PutRequest: { Item: { pk: `WARMUPB#${(i * 25 + k) % 5000}`, sk: 'B', n: i } } })) } })),
          ddb.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: Array.from({ length: 100 }, (_, k) => key(i + k)) } } })),
          ddb.send(new QueryCommand({ TableName, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :g', ExpressionAttributeValues: { ':g': 'WARMUPHOT' }, ScanIndexForward: false, Limit: 200 })),
        ];
        await Promise.all(sends);
        calls += sends.length;
      }
    }),
  );
  return calls;
}

/**
 * The held-out readers ask a minute after the last view, when on a live site the consumer's next batch has rewritten
 * the popular snapshot. A compressed replay stops before that rewrite, so the bench moves the clock a minute on and
 * rewrites the snapshot once with the consumer's own code (its turn item removed first).
 */
async function askLater(clientId: string, train: LogView[], logTime: ((t: number) => void) | undefined): Promise<void> {
  const { POPULAR_SNAPSHOT_REFRESH_SECONDS } = await import('../shared/recos/read-cache.js');
  logTime?.(train.reduce((m, v) => Math.max(m, v.t), 0) + POPULAR_SNAPSHOT_REFRESH_SECONDS + 1);
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { ddb, tableName } = await import('../shared/db/client.js');
  const { keys } = await import('../shared/db/keys.js');
  const { DynamoViewStore, POPULAR_SNAPSHOT_TURN } = await import('../shared/recos/dynamo-views.js');
  await ddb.send(new DeleteCommand({ TableName: tableName(), Key: { ...keys.popularSnapshot(clientId), sk: POPULAR_SNAPSHOT_TURN } }));
  if (!(await new DynamoViewStore().refreshPopular(clientId))) throw new Error('the popular snapshot was not rewritten');
}

/** The result as a table (one row per method). */
export function formatResult(r: ReplayResult, serviceName = 'service (default blend)'): string {
  const row = (name: string, m: Metrics) =>
    `| ${name.padEnd(26)} | ${(m.hitRate * 100).toFixed(1).padStart(5)} % | ${m.ndcg.toFixed(3)} | ${m.mrr.toFixed(3)} | ${(m.coverage * 100).toFixed(1).padStart(5)} % | ${(m.hitRate / Math.max(1e-9, r.covisitation.hitRate)).toFixed(2)}× |`;
  return [
    `| method                     | hit@10  | nDCG@10 | MRR@10 | coverage | vs co-visitation |`,
    `|----------------------------|---------|---------|--------|----------|------------------|`,
    row(serviceName, r.service),
    row('most read (offline)', r.mostRead),
    row('co-visitation (offline)', r.covisitation),
    `${r.evaluated} readers evaluated; algo of the answers: ${[...r.algos].sort((a, b) => b[1] - a[1]).map(([a, n]) => `${a} ${((n / r.evaluated) * 100).toFixed(0)} %`).join(', ')}`,
  ].join('\n');
}
