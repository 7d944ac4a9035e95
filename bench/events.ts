/**
 * `npm run bench:events`: assembles one day of 1,000,000 events spread over
 * 1,000 raw objects (and a 100,000-event day, to show memory does not grow
 * with the day) through the real assembler against the s3rver emulator, and
 * compares in the same run with two baselines over the same objects:
 *   read-only  – stream every raw object and count bytes (the I/O floor);
 *   in-memory  – read everything, parse, sort in memory, build one CSV string
 *                (the naive approach the streaming merge replaces).
 * Each measurement runs in its own child process so its peak RSS is its own.
 * Peak RSS of a garbage-collected process says as much about how lazily V8
 * collects as about live data, so both methods also run with V8's old space
 * capped (HEAP_CAP_MB, default 64): the streaming assembler must still
 * finish, the in-memory sort is expected to run out of memory.
 * Options: EVENTS=<n> OBJECTS=<n> to change the large day.
 *
 * Many tiny objects (what one raw object per SES notification made): the same
 * 20,000 events as TINY one-line objects (also a tenth of that, to show how
 * time scales with the object count) vs in 20 objects of 1,000 lines (what
 * SQS batches of 1,000 make). `npm run bench:events -- --tiny` runs only
 * these cases. TINY=<n> changes the count. The npm script runs Node with
 * --openssl-legacy-provider: s3rver encrypts its ListObjectsV2 continuation
 * tokens with DES, which OpenSSL 3 refuses otherwise, so a listing of more
 * than 1,000 keys fails on the emulator without it.
 *
 * A big day (`-- --big-day` runs only this; BIG_EVENTS=<n>, default
 * 5,000,000): one event type, one day treated as today on a simulated
 * clock, written as the SES ingester writes it (batches of 1,000 events
 * dated over the ~17 s the batch took to fill, some up to 2 minutes
 * earlier; a batch crossing an hour is two objects). Measured, each in its
 * own process: the scheduled hourly runs (01:05 … 22:05); the download of
 * today at 23:03, before the 23:05 run (two hours to assemble: the worst
 * case), and at 23:40 (the last hour); again with nothing new; the daily
 * job after midnight; the download of the day once past. Baseline in the
 * same run: the previous approach, today's whole day merged inside the
 * request. The downloads call the service's getEventFile (premium check
 * against DynamoDB Local included) with the simulated clock.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, arg, ...rest] = process.argv.slice(2);
const DAY = '2026-01-15';
/** The big day, treated as today by the simulated clock. */
const BIG_DAY = '2026-01-20';

interface Measure {
  ms: number;
  maxRssMb: number;
  /** Largest sampled V8 heap in use and Buffer memory outside the heap. */
  maxHeapMb: number;
  maxBuffersMb: number;
  events: number;
  bytes: number;
  note?: string;
}

async function child(kind: string, clientId: string): Promise<Measure> {
  const { s3EventStore } = await import('../shared/events/store.js');
  const { assembleEvents } = await import('../shared/events/assemble.js');
  const { eventPaths } = await import('../shared/events/paths.js');
  const { csvRow } = await import('../shared/events/csv.js');
  const { format } = await import('fast-csv');
  const store = s3EventStore();
  let maxHeap = 0;
  let maxBuffers = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    maxHeap = Math.max(maxHeap, m.heapUsed);
    maxBuffers = Math.max(maxBuffers, m.arrayBuffers);
  }, 20);
  const started = performance.now();
  let events = 0;
  let bytes = 0;
  let note: string | undefined;
  if (kind === 'hourly') {
    const { runHourlyAssembly } = await import('../shared/events/hourly.js');
    const run = await runHourlyAssembly(store, { time: rest[0], clients: [clientId] });
    note = run.built.map((b) => `hour${b.hours.length > 1 ? 's' : ''} ${b.hours.join(', ')} from ${b.rawObjectsRead} raw objects`).join('; ') || 'nothing to build';
  } else if (kind === 'request') {
    const { getEventFile } = await import('../shared/events/download.js');
    const raws: string[] = [];
    const counted = { ...store, read: (key: string, range?: { start: number; end: number }) => (key.startsWith('raw/') && raws.push(key), store.read(key, range)) };
    const file = await getEventFile(counted, clientId, 'nl_click', BIG_DAY, new Date(rest[0]));
    const key = (file.complete ? eventPaths.file : eventPaths.partial)(clientId, 'nl_click', BIG_DAY);
    bytes = 'url' in file ? (await store.head(key))!.size : Buffer.byteLength(file.body);
    const hours = [...new Set(raws.map((k) => k.split('/')[4]))].sort();
    note = `${'url' in file ? '302 presigned URL' : '200 inline'}, ${file.complete ? 'complete' : 'incomplete'}; read ${raws.length} raw objects${hours.length ? ` (hour${hours.length > 1 ? 's' : ''} ${hours.join(', ')})` : ''}`;
  } else if (kind === 'daily') {
    const { runDailyAssembly } = await import('../shared/events/daily.js');
    const [file] = (await runDailyAssembly(store, { date: BIG_DAY, clients: [clientId] })).files;
    events = file.events ?? 0;
    bytes = (await store.head(file.key!))!.size;
    note = `hours built: ${file.hoursBuilt?.length ?? 'n/a'}`;
  } else if (kind === 'whole-today') {
    const result = await assembleEvents(store, clientId, 'nl_click', BIG_DAY, { target: 'partial', method: 'whole', force: true });
    events = result.events ?? 0;
    bytes = (await store.head(result.key!))!.size;
  } else if (kind === 'assemble') {
    const result = await assembleEvents(store, clientId, 'nl_click', DAY, { force: true, method: 'whole' });
    events = result.events ?? 0;
    bytes = (await store.head(result.key!))!.size;
  } else if (kind === 'read') {
    for (const o of await store.list(eventPaths.raw(clientId, 'nl_click', DAY))) {
      for await (const chunk of await store.read(o.key)) {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) events++;
      }
    }
  } else {
    const records: Array<Record<string, unknown> & { date: string }> = [];
    for (const o of await store.list(eventPaths.raw(clientId, 'nl_click', DAY))) {
      let text = '';
      for await (const chunk of await store.read(o.key)) text += Buffer.from(chunk).toString('utf8');
      for (const line of text.split('\n')) if (line) records.push(JSON.parse(line));
    }
    records.sort((a, b) => Date.parse(a.date) - Date.parse(b.date));
    const csv = format<string[], string[]>({ headers: true, rowDelimiter: '\r\n' });
    const parts: string[] = [];
    csv.on('data', (c) => parts.push(String(c)));
    const done = new Promise((r) => csv.on('end', r));
    for (const r of records) csv.write(csvRow('nl_click', r));
    csv.end();
    await done;
    const body = parts.join('');
    events = records.length;
    bytes = Buffer.byteLength(body);
  }
  clearInterval(sampler);
  const mb = (n: number) => n / 1024 / 1024;
  return { ms: performance.now() - started, maxRssMb: process.resourceUsage().maxRSS / 1024, maxHeapMb: mb(maxHeap), maxBuffersMb: mb(maxBuffers), events, bytes, note };
}

function runChild(kind: string, clientId: string, env: Record<string, string>, heapMb?: number, args: string[] = []): Promise<Measure> {
  return new Promise((done, fail) => {
    const flags = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
    const p = spawn(process.execPath, [...flags, '--import', 'tsx', import.meta.filename, `child:${kind}`, clientId, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.on('exit', (code, signal) => (code === 0 ? done(JSON.parse(out.trim().split('\n').pop()!)) : fail(new Error(`${kind} exited ${code ?? signal}`))));
  });
}

async function populate(clientId: string, events: number, objects: number): Promise<void> {
  const { recordEvents } = await import('../shared/events/record.js');
  const { mapLimit } = await import('../shared/events/map-limit.js');
  const perObject = Math.ceil(events / objects);
  const dayStart = Date.parse(`${DAY}T00:00:00.000Z`);
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  await mapLimit(
    Array.from({ length: objects }, (_, i) => i),
    8,
    async (o) => {
      const n = Math.min(perObject, events - o * perObject);
      if (n <= 0) return;
      await recordEvents(
        clientId,
        Array.from({ length: n }, (_, i) => ({
          event: 'nl_click' as const,
          // Each object within one hour, as recordEvents writes them (one object per hour it covers).
          date: new Date(dayStart + (o % 24) * 3_600_000 + Math.floor(random() * 3_600_000)).toISOString(),
          email: `reader-${o}-${i}@example.com`,
          campaign_id: `cmp-${o % 17}`,
          newsletter_id: `nl-${o % 5}`,
          email_list_id: 1 + (o % 3),
          target_id: `article-${i % 100}`,
          target_url: `https://news.example.com/2026/01/15/article-${i % 100}?utm_source=newsletter,daily`,
          target_position: i % 12,
        })),
      );
    },
  );
}

/** Assembly time against the number of raw objects for the same events (one-line objects vs batches). */
async function tinyObjects(env: Record<string, string>): Promise<void> {
  const tiny = Number(process.env.TINY ?? 20_000);
  const days = [
    { clientId: 'bench-batched', events: tiny, objects: tiny / 1000, label: `${tiny.toLocaleString('en')} events in ${tiny / 1000} objects of 1,000 lines (SQS batches)` },
    { clientId: 'bench-tiny-10', events: tiny / 10, objects: tiny / 10, label: `${(tiny / 10).toLocaleString('en')} one-line objects` },
    { clientId: 'bench-tiny', events: tiny, objects: tiny, label: `${tiny.toLocaleString('en')} one-line objects (one per notification)` },
  ];
  for (const d of days) {
    const t = performance.now();
    await populate(d.clientId, d.events, d.objects);
    console.log(`populated ${d.label} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  }
  console.log('\n| raw objects | method | time s | events/s | ms per raw object |');
  console.log('|---|---|---:|---:|---:|');
  for (const d of days) {
    for (const kind of ['read', 'assemble']) {
      const m = await runChild(kind, d.clientId, env);
      if (m.events !== d.events) throw new Error(`${kind}: ${m.events} events, expected ${d.events}`);
      const name = kind === 'read' ? 'read-only baseline' : 'streaming assembler';
      console.log(`| ${d.label} | ${name} | ${(m.ms / 1000).toFixed(2)} | ${Math.round((d.events / m.ms) * 1000).toLocaleString('en')} | ${(m.ms / d.objects).toFixed(2)} |`);
    }
  }
  console.log('');
}

/** A day of `events` clicks written as the SES ingester writes them: batches of 1,000, spread evenly over the day. */
async function populateBigDay(clientId: string, events: number): Promise<number> {
  const { recordEvents } = await import('../shared/events/record.js');
  const { mapLimit } = await import('../shared/events/map-limit.js');
  const BATCH = 1000;
  const batches = Math.ceil(events / BATCH);
  const dayStart = Date.parse(`${BIG_DAY}T00:00:00.000Z`);
  const window = 86_400_000 / batches;
  await mapLimit(
    Array.from({ length: batches }, (_, b) => b),
    8,
    async (b) => {
      let seed = b + 1;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const n = Math.min(BATCH, events - b * BATCH);
      // Dated over the time the batch took to fill; one event in 50 up to 2 minutes earlier (the SQS batching window).
      const end = dayStart + (b + 1) * window;
      await recordEvents(
        clientId,
        Array.from({ length: n }, (_, i) => ({
          event: 'nl_click' as const,
          date: new Date(Math.max(dayStart, end - Math.floor(random() * (i % 50 === 0 ? 120_000 : window)))).toISOString(),
          email: `reader-${b}-${i}@example.com`,
          campaign_id: `cmp-${b % 17}`,
          newsletter_id: `nl-${b % 5}`,
          email_list_id: 1 + (b % 3),
          target_id: `article-${i % 100}`,
          target_url: `https://news.example.com/2026/01/20/article-${i % 100}?utm_source=newsletter,daily`,
          target_position: i % 12,
        })),
      );
    },
  );
  return batches;
}

/** The big day: hourly runs, today's download, the daily job, the past day's download, and the whole-day baseline. */
async function bigDay(env: Record<string, string>): Promise<void> {
  const events = Number(process.env.BIG_EVENTS ?? 5_000_000);
  const clientId = 'bench-big';
  const { createClient } = await import('../shared/clients/clients.js');
  await createClient(clientId, { premiumEvents: true });
  let t = performance.now();
  const batches = await populateBigDay(clientId, events);
  const { s3EventStore } = await import('../shared/events/store.js');
  const { eventPaths } = await import('../shared/events/paths.js');
  const { recordEvents } = await import('../shared/events/record.js');
  const raws = (await s3EventStore().list(eventPaths.raw(clientId, 'nl_click', BIG_DAY))).length;
  console.log(`\nBig day: populated ${events.toLocaleString('en')} nl_click events of ${BIG_DAY} in ${batches.toLocaleString('en')} batches, ${raws.toLocaleString('en')} raw objects (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  // New events keep arriving: one more batch in the open hour before each download, so it has work to do.
  let more = 0;
  const arrive = (iso: string) =>
    recordEvents(clientId, Array.from({ length: 1000 }, (_, i) => ({ event: 'nl_click' as const, date: iso, email: `late-${more}-${i}@example.com`, target_url: 'https://news.example.com/' }))).then(() => more++);
  const rows: Array<[string, Measure]> = [];
  const print = (name: string, m: Measure) => {
    rows.push([name, m]);
    console.log(`| ${name} | ${(m.ms / 1000).toFixed(2)} | ${m.maxRssMb.toFixed(0)} | ${m.maxHeapMb.toFixed(0)} | ${m.bytes ? (m.bytes / 1e6).toFixed(1) : ''} | ${m.note ?? (m.events ? `${m.events.toLocaleString('en')} events` : '')} |`);
  };
  console.log('\n| step | time s | peak RSS MB | peak heap used MB | file MB | what |');
  console.log('|---|---:|---:|---:|---:|---|');
  await arrive(`${BIG_DAY}T23:39:00.000Z`);
  print(`baseline: today's whole day merged in the request (previous approach), at 23:40`, await runChild('whole-today', clientId, env));
  const hourly: Measure[] = [];
  for (let h = 1; h <= 22; h++) {
    const time = `${BIG_DAY}T${String(h).padStart(2, '0')}:05:00.000Z`;
    const m = await runChild('hourly', clientId, env, undefined, [time]);
    hourly.push(m);
    console.log(`| hourly run at ${time.slice(11, 16)} | ${(m.ms / 1000).toFixed(2)} | ${m.maxRssMb.toFixed(0)} | ${m.maxHeapMb.toFixed(0)} | | ${m.note} |`);
  }
  await arrive(`${BIG_DAY}T23:02:00.000Z`);
  print('download of today at 23:03, before the 23:05 run (hours 22 and 23 to assemble)', await runChild('request', clientId, env, undefined, [`${BIG_DAY}T23:03:00.000Z`]));
  print('hourly run at 23:05 (hour 22: its raw variant; the download built the safe one)', await runChild('hourly', clientId, env, undefined, [`${BIG_DAY}T23:05:00.000Z`]));
  await arrive(`${BIG_DAY}T23:39:30.000Z`);
  print('download of today at 23:40 (hour 23 to assemble)', await runChild('request', clientId, env, undefined, [`${BIG_DAY}T23:40:00.000Z`]));
  print('download of today at 23:41, nothing new', await runChild('request', clientId, env, undefined, [`${BIG_DAY}T23:41:00.000Z`]));
  const nextDay = `${BIG_DAY.slice(0, 8)}${String(Number(BIG_DAY.slice(8)) + 1).padStart(2, '0')}`;
  print('hourly run at 00:05 next day (hour 23)', await runChild('hourly', clientId, env, undefined, [`${nextDay}T00:05:00.000Z`]));
  print('daily job (00:15): the day file from its hours', await runChild('daily', clientId, env));
  print('download of the past day', await runChild('request', clientId, env, undefined, [`${nextDay}T12:00:00.000Z`]));
  const [, daily] = rows.find(([name]) => name.startsWith('daily job'))!;
  if (daily.events !== events + more * 1000) throw new Error(`daily job: ${daily.events} events, expected ${events + more * 1000}`);
  if (rows[0][1].events !== events + 1000) throw new Error(`baseline: ${rows[0][1].events} events, expected ${events + 1000}`);
  if (!rows.at(-1)![1].note?.startsWith('302')) throw new Error(`the past day's download was not a presigned URL: ${rows.at(-1)![1].note}`);
  const sorted = hourly.map((m) => m.ms).sort((a, b) => a - b);
  const baseline = rows[0][1];
  const rate = baseline.events / (baseline.ms / 1000);
  console.log(
    `\nhourly runs 01:05–22:05: median ${(sorted[sorted.length >> 1] / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s, peak RSS ≤ ${Math.max(...hourly.map((m) => m.maxRssMb)).toFixed(0)} MB; ` +
      `baseline ${(baseline.ms / 1000).toFixed(1)} s for ${baseline.events.toLocaleString('en')} events (${Math.round(rate).toLocaleString('en')} events/s: about ${(Math.round((rate * 29) / 10_000) * 10_000).toLocaleString('en')} events fit in API Gateway's 29 s here)`,
  );
}

async function main() {
  const { localAwsEnv } = await import('../infra/local/services.js');
  const { ensureBuckets, freePort, startS3Emulator } = await import('../infra/local/services.js');
  const dir = mkdtempSync(join(tmpdir(), 'bench-events-'));
  const s3 = await startS3Emulator({ port: await freePort(), directory: join(dir, 's3') });
  const env = { ...localAwsEnv, AWS_ENDPOINT_URL_S3: s3.endpoint, EVENTS_BUCKET: 'events' };
  Object.assign(process.env, env);
  try {
    await ensureBuckets(s3.endpoint, ['events']);
    if (process.argv.includes('--big-day')) return await withDynamo(env, dir, () => bigDay(env));
    await tinyObjects(env);
    if (process.argv.includes('--tiny')) return;
    const big = { events: Number(process.env.EVENTS ?? 1_000_000), objects: Number(process.env.OBJECTS ?? 1000) };
    const days = [
      { clientId: 'bench-small', events: big.events / 10, objects: big.objects / 10 },
      { clientId: 'bench-large', ...big },
    ];
    for (const d of days) {
      const t = performance.now();
      await populate(d.clientId, d.events, d.objects);
      console.log(`populated ${d.events.toLocaleString('en')} events in ${d.objects} raw objects (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    }
    console.log('\n| day | method | time s | events/s | MB/s (raw in) | peak RSS MB | peak heap used MB | peak Buffers MB | output MB |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    const cap = Number(process.env.HEAP_CAP_MB ?? 64);
    for (const d of days) {
      const read = await runChild('read', d.clientId, env);
      const runs: Array<[string, () => Promise<Measure>]> = [
        ['read-only baseline', async () => read],
        ['in-memory sort baseline', () => runChild('memory', d.clientId, env)],
        ['streaming assembler', () => runChild('assemble', d.clientId, env)],
        [`in-memory sort, heap capped at ${cap} MB`, () => runChild('memory', d.clientId, env, cap)],
        [`streaming assembler, heap capped at ${cap} MB`, () => runChild('assemble', d.clientId, env, cap)],
      ];
      for (const [name, run] of runs) {
        const label = `| ${d.events.toLocaleString('en')} / ${d.objects} obj | ${name} |`;
        let m: Measure;
        try {
          m = await run();
        } catch (err) {
          console.log(`${label} failed: ${(err as Error).message} | | | | | | |`);
          continue;
        }
        const rawMb = read.bytes / 1e6;
        console.log(
          `${label} ${(m.ms / 1000).toFixed(2)} | ${Math.round((d.events / m.ms) * 1000).toLocaleString('en')} | ${(rawMb / (m.ms / 1000)).toFixed(1)} | ${m.maxRssMb.toFixed(0)} | ${m.maxHeapMb.toFixed(0)} | ${m.maxBuffersMb.toFixed(0)} | ${(m.bytes / 1e6).toFixed(1)} |`,
        );
        if (name !== 'read-only baseline' && m.events !== d.events) throw new Error(`${name}: ${m.events} events, expected ${d.events}`);
      }
    }
    await withDynamo(env, dir, () => bigDay(env));
  } finally {
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `work` with DynamoDB Local up (the download checks the client's premium flag) and its endpoint in `env`. */
async function withDynamo(env: Record<string, string>, dir: string, work: () => Promise<void>): Promise<void> {
  const { ensureTable, freePort, startDynamoLocal } = await import('../infra/local/services.js');
  const { localNames } = await import('../infra/local/env.js');
  const dynamo = await startDynamoLocal({ port: await freePort() });
  try {
    await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
    Object.assign(env, { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, TABLE_NAME: localNames.TABLE_NAME, POWERTOOLS_DEV: 'true', DATA_DIR: dir });
    Object.assign(process.env, env);
    await work();
  } finally {
    await dynamo.stop();
  }
}

if (mode?.startsWith('child:')) {
  child(mode.slice('child:'.length), arg).then(
    (m) => console.log(JSON.stringify(m)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
