/**
 * `npm run bench:events`: big days through the service (bench/events-day.ts).
 * `npm run bench:events -- --merge`: the merge itself: assembles one day of 1,000,000 events spread over
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
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, arg] = process.argv.slice(2);
const DAY = '2026-01-15';

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
  if (kind === 'assemble') {
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
      for (const line of text.split('\n')) if (line) records.push(JSON.parse(line) as Record<string, unknown> & { date: string });
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
  return { ms: performance.now() - started, maxRssMb: process.resourceUsage().maxRSS / 1024, maxHeapMb: mb(maxHeap), maxBuffersMb: mb(maxBuffers), events, bytes };
}

function runChild(kind: string, clientId: string, env: Record<string, string>, heapMb?: number): Promise<Measure> {
  return new Promise((done, fail) => {
    const flags = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
    const p = spawn(process.execPath, [...flags, '--import', 'tsx', import.meta.filename, `child:${kind}`, clientId], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.on('exit', (code, signal) => (code === 0 ? done(JSON.parse(out.trim().split('\n').pop()!) as Measure) : fail(new Error(`${kind} exited ${code ?? signal}`))));
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

async function main() {
  const { localAwsEnv } = await import('../infra/local/services.js');
  const { ensureBuckets, freePort, startS3Emulator } = await import('../infra/local/services.js');
  const dir = mkdtempSync(join(tmpdir(), 'bench-events-'));
  const s3 = await startS3Emulator({ port: await freePort(), directory: join(dir, 's3') });
  const env = { ...localAwsEnv, AWS_ENDPOINT_URL_S3: s3.endpoint, EVENTS_BUCKET: 'events' };
  Object.assign(process.env, env);
  try {
    await ensureBuckets(s3.endpoint, ['events']);
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
        ['read-only baseline', () => Promise.resolve(read)],
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
  } finally {
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
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
} else if (process.argv.includes('--merge') || process.argv.includes('--tiny')) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  // The default: big days through the service (bench/events-day.ts).
  import('./events-day.js')
    .then((m) => m.runBigDays())
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
