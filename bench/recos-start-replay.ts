/**
 * Replays page views through `npm start` itself (`infra/local/start.ts`, spawned on its own ports and data folder):
 * readers with a real news log's history lengths (p25 7, p50 18, p75 30, capped at 30; 10 % with 1–3 views), their
 * visits interleaved, each view a `POST /v1/track`, `concurrency` in flight, while a reader asks for recommendations
 * every `askEveryMs`; then the queue drains and held-out readers ask again. Reports the send rate, the recommendation
 * latencies during and after, and the consumer's timeouts, failed batches and dead letters (the stack's console lines).
 *
 * `npm run bench:recos:start-replay -- --views=80000`, or `tsx bench/recos-start-replay.ts --views=80000 --concurrency=16`.
 * Used by test/integration/recos-start-replay.test.ts with a short burst.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../infra/local/services.js';
import { processCpuMs } from './local-stack.js';
import { prng } from './recos-data.js';

const root = resolve(import.meta.dirname, '..');

export interface StartReplayOptions {
  views: number;
  /** POST /v1/track requests in flight. */
  concurrency?: number;
  articles?: number;
  seed?: number;
  /** One recommendation request every this many ms while the views are sent. */
  askEveryMs?: number;
  /** Readers who ask once the queue drained. */
  askAfter?: number;
  /** Extra environment of the stack (e.g. a job's timeout). */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface StartReplayResult {
  views: number;
  sendSeconds: number;
  viewsPerSecond: number;
  drainSeconds: number;
  statuses: Record<string, number>;
  /** Recommendation latencies (ms) while the views were sent, and after the queue drained. */
  during: { n: number; p50: number; p99: number; errors: number };
  after: { n: number; p50: number; p99: number; errors: number };
  /** The stack's console lines about the tracking consumer. */
  failedBatches: string[];
  deadLetters: string[];
  jobLines: number;
  /** The consumer's runs that counted views: their duration (ms) and views, as its console lines say. */
  batches: Array<{ ms: number; counted: number }>;
  /** While the queue drained (no page views sent): CPU ms of `npm start`'s process (its consumer thread) and of DynamoDB Local per view applied then. */
  drainCpuPerView?: { node: number; dynamo: number };
  /** Views whose batch ran out of time before their article update started (delivered again). */
  deferred: number;
}

/** History lengths of a real news log: a quantile function through its p0/p9.7/p25/p50/p75 points, capped at 30. */
export function historyLength(u: number): number {
  const points: Array<[number, number]> = [
    [0, 1],
    [0.097, 3],
    [0.25, 7],
    [0.5, 18],
    [0.75, 30],
  ];
  if (u >= 0.75) return 30;
  for (let i = 1; i < points.length; i++) {
    const [u1, l1] = points[i];
    const [u0, l0] = points[i - 1];
    if (u <= u1) return Math.max(1, Math.round(l0 + ((u - u0) / (u1 - u0)) * (l1 - l0)));
  }
  return 30;
}

export interface ReplayView {
  reader: string;
  url: string;
}

/** `views` page views of Zipf-popular articles by readers of realistic history lengths, their visits interleaved. */
export function newsViews(views: number, { articles = 3000, seed = 52 } = {}): ReplayView[] {
  const random = prng(seed);
  const weights = Array.from({ length: articles }, (_, i) => 1 / (i + 1));
  const cumulative: number[] = [];
  weights.reduce((s, w, i) => (cumulative[i] = s + w), 0);
  const total = cumulative[articles - 1];
  const pick = () => {
    const x = random() * total;
    let lo = 0;
    let hi = articles - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const timed: Array<ReplayView & { at: number }> = [];
  for (let r = 0; timed.length < views; r++) {
    const length = historyLength(random());
    const start = random();
    const read = new Set<number>();
    for (let k = 0; k < length && timed.length < views; k++) {
      let a = pick();
      for (let tries = 0; read.has(a) && tries < 10; tries++) a = pick();
      read.add(a);
      timed.push({ reader: `r${seed}-${r}`, url: `http://localhost/news/${seed}/${a}`, at: start + k * 0.002 });
    }
  }
  return timed.sort((a, b) => a.at - b.at).map(({ reader, url }) => ({ reader, url }));
}

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
const summary = (ms: number[], errors: number) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { n: sorted.length, p50: Math.round(quantile(sorted, 0.5)), p99: Math.round(quantile(sorted, 0.99)), errors };
};

function request(agent: http.Agent, port: number, method: string, path: string, body?: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** The DynamoDB Local JVM among a process's children (/proc), if any. */
function javaChild(pid: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    return children.find((c) => readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('DynamoDBLocal'));
  } catch {
    return undefined;
  }
}

/** Starts `npm start`'s entry on free ports in a fresh data folder, replays, stops it (its whole process group). */
export async function startReplay(o: StartReplayOptions): Promise<StartReplayResult> {
  const log = o.log ?? ((line: string) => console.log(line));
  const dataDir = mkdtempSync(join(tmpdir(), 'nl-start-replay-'));
  const ports = { PORT: await freePort(), DYNAMODB_PORT: await freePort(), S3_PORT: await freePort() };
  const logFile = join(dataDir, 'stack.log');
  const stack: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a')],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_OPTIONS: '--openssl-legacy-provider', ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])), DATA_DIR: dataDir, ...(process.env.LOCAL_QUEUE_CONCURRENCY ? { LOCAL_QUEUE_CONCURRENCY: process.env.LOCAL_QUEUE_CONCURRENCY } : {}), ...o.env },
  });
  const exited = new Promise<void>((done) => stack.once('exit', () => done()));
  // A caller that exits first (a test run out of time) takes the stack's process group (DynamoDB Local among it) along.
  const orphaned = () => {
    if (stack.exitCode === null) process.kill(-stack.pid!, 'SIGKILL');
  };
  process.once('exit', orphaned);
  const agent = new http.Agent({ keepAlive: true, maxSockets: (o.concurrency ?? 16) + 2 });
  try {
    const deadline = performance.now() + 90_000;
    while (!(await request(agent, ports.PORT, 'GET', '/v1/openapi.json').then((r) => r.status === 200, () => false))) {
      if (performance.now() > deadline || stack.exitCode !== null) throw new Error(`the local stack did not start:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo-client.json'), 'utf8')) as { tracking_key: string; block_key: string };
    const env = JSON.parse(readFileSync(join(dataDir, 'local-env.json'), 'utf8')) as { AWS_ENDPOINT_URL_SQS: string };
    const views = newsViews(o.views, { articles: o.articles, seed: o.seed });
    const statuses: Record<string, number> = {};
    const asked = (reader: string, page: string) => `/v1/clients/${demo.block_key}/users/${encodeURIComponent(reader)}/recommendations?rows=10&page_url=${encodeURIComponent(page)}`;
    const during: number[] = [];
    let duringErrors = 0;
    let sending = true;
    const asker = (async () => {
      const askAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = 0; sending; i++) {
        const v = views[Math.floor((i * 7919) % views.length)];
        const r = await request(askAgent, ports.PORT, 'GET', asked(v.reader, v.url)).catch(() => ({ status: 0, ms: 0 }));
        if (r.status === 200) during.push(r.ms);
        else duringErrors++;
        await new Promise((done) => setTimeout(done, o.askEveryMs ?? 100));
      }
      askAgent.destroy();
    })();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: o.concurrency ?? 16 }, async () => {
        while (next < views.length) {
          const v = views[next++];
          const r = await request(agent, ports.PORT, 'POST', `/v1/track/${demo.tracking_key}`, JSON.stringify({ user_id: v.reader, url: v.url }));
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      }),
    );
    const sendSeconds = (performance.now() - t0) / 1000;
    sending = false;
    await asker;
    const t1 = performance.now();
    const sqs = new URL(env.AWS_ENDPOINT_URL_SQS);
    const java = javaChild(stack.pid!);
    const cpu0 = { node: processCpuMs(stack.pid), dynamo: processCpuMs(java), lines: readFileSync(logFile, 'utf8').split('\n').length };
    await request(agent, Number(sqs.port), 'GET', '/_local/drain');
    const drainSeconds = (performance.now() - t1) / 1000;
    const drainedViews = readFileSync(logFile, 'utf8')
      .split('\n')
      .slice(cpu0.lines)
      .reduce((n, l) => n + Number(/^job trackingViews .*"counted":(\d+)/.exec(l)?.[1] ?? 0), 0);
    const node1 = processCpuMs(stack.pid);
    const dynamo1 = processCpuMs(java);
    const drainCpuPerView =
      drainedViews > 0 && cpu0.node !== undefined && node1 !== undefined && cpu0.dynamo !== undefined && dynamo1 !== undefined
        ? { node: (node1 - cpu0.node) / drainedViews, dynamo: (dynamo1 - cpu0.dynamo) / drainedViews }
        : undefined;
    const after: number[] = [];
    let afterErrors = 0;
    const readers = [...new Map(views.map((v) => [v.reader, v.url])).entries()].slice(0, o.askAfter ?? 200);
    for (const [reader, url] of readers) {
      const r = await request(agent, ports.PORT, 'GET', asked(reader, url));
      if (r.status === 200) after.push(r.ms);
      else afterErrors++;
    }
    const lines = readFileSync(logFile, 'utf8').split('\n');
    const result: StartReplayResult = {
      views: views.length,
      sendSeconds,
      viewsPerSecond: views.length / sendSeconds,
      drainSeconds,
      statuses,
      during: summary(during, duringErrors),
      after: summary(after, afterErrors),
      failedBatches: lines.filter((l) => /queue trackingViews: batch of \d+ failed|job trackingViews .* failed/.test(l)),
      deadLetters: lines.filter((l) => /queue trackingViews: message .* dead-lettered/.test(l)),
      jobLines: lines.filter((l) => l.startsWith('job trackingViews')).length,
      batches: lines.flatMap((l) => {
        const m = /^job trackingViews (\d+) ms .*"counted":(\d+)/.exec(l);
        return m && Number(m[2]) > 0 ? [{ ms: Number(m[1]), counted: Number(m[2]) }] : [];
      }),
      deferred: 0,
      drainCpuPerView,
    };
    result.deferred = lines.reduce((n, l) => n + Number(/^job trackingViews .*"deferred":(\d+)/.exec(l)?.[1] ?? 0), 0);
    const big = result.batches.filter((b) => b.counted >= 500);
    const perView = big.map((b) => b.ms / b.counted).sort((a, b) => a - b);
    log(
      `replayed ${result.views} views in ${sendSeconds.toFixed(1)} s (${result.viewsPerSecond.toFixed(0)} views/s, ${o.concurrency ?? 16} in flight), drained ${drainSeconds.toFixed(1)} s later; ` +
        `responses ${JSON.stringify(statuses)}; recommendations during p50 ${result.during.p50} ms p99 ${result.during.p99} ms (${result.during.n}, ${result.during.errors} errors), ` +
        `after p50 ${result.after.p50} ms p99 ${result.after.p99} ms (${result.after.n}, ${result.after.errors} errors); consumer runs ${result.jobLines}, failed ${result.failedBatches.length}, dead letters ${result.deadLetters.length}, deferred views ${result.deferred}; ` +
        `batches of 500+ views: ${big.length}, sizes ${big.map((b) => b.counted).join(',')}, longest ${Math.max(0, ...big.map((b) => b.ms))} ms, ms per view p50 ${quantile(perView, 0.5)?.toFixed(2)} max ${perView.at(-1)?.toFixed(2)}; ` +
        `CPU per view applied while draining: node ${drainCpuPerView?.node.toFixed(2)} ms, DynamoDB Local ${drainCpuPerView?.dynamo.toFixed(2)} ms`,
    );
    return result;
  } finally {
    agent.destroy();
    if (stack.exitCode === null) {
      process.kill(-stack.pid!, 'SIGTERM');
      const killed = setTimeout(() => process.kill(-stack.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(killed);
    }
    process.off('exit', orphaned);
    if (!process.env.KEEP_REPLAY_DATA) rmSync(dataDir, { recursive: true, force: true });
    else log(`data kept in ${dataDir}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
  const result = await startReplay({ views: Number(args.get('views') ?? 20_000), concurrency: Number(args.get('concurrency') ?? 16), askAfter: Number(args.get('ask-after') ?? 200) });
  for (const line of [...result.failedBatches, ...result.deadLetters].slice(0, 10)) console.log(`  ${line}`);
  process.exitCode = result.failedBatches.length + result.deadLetters.length > 0 || result.viewsPerSecond < 500 || result.during.p99 > 200 || result.after.p99 > 200 ? 1 : 0;
}
