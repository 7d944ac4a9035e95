/**
 * `npm run bench:events`: one busy day of one event type (BIG_SIZES, default
 * 500,000 and 5,000,000 clicks, each on its own day) through the real code
 * paths, against the S3 emulator (s3rver, UploadPartCopy shim) and DynamoDB
 * Local, on a simulated clock (bench/sim-clock.ts: every process of the run
 * stands at the scenario's time; durations are real):
 *
 *  - the raw records, written as the SES ingester writes them (recordEvents:
 *    batches of 1,000 events dated over the time the batch took to fill, one
 *    in 50 up to 2 minutes earlier; a batch crossing an hour is two objects);
 *  - the hourly job (its handler, a scheduled event) at 01:05 … 22:05;
 *  - GET /v1/newsletters/events/nl_click/<today> through the local gateway
 *    at 23:03 (before the 23:05 run: hours 22 and 23 to assemble, the worst
 *    case), at 23:40 (new records in hour 23) and at 23:41 (nothing new), the
 *    hourly runs at 23:05 and 00:05, the daily job at 00:15 (its handler, a
 *    scheduled event), then the past day's GET at 12:00;
 *  - the download of the presigned URLs (streamed through SHA-256, lines
 *    counted: the past day's file holds every event once).
 *
 * Each step runs in its own process (a Lambda's container), so its peak RSS
 * is its own; the S3 and DynamoDB calls it sends are counted. Baselines from
 * the same run: the day's bytes read by a plain GetObject (the floor of any
 * download), and, for days up to WHOLE_MAX events (default 500,000), the
 * previous approach: the whole day merged in one go, as the request did
 * before hours existed; its file must be byte-identical to the stitched one.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { setSimNow } from './sim-clock.js';

const EVENT = 'nl_click' as const;

export interface StepMeasure {
  ms: number;
  maxRssMb: number;
  /** S3 and DynamoDB commands sent by the step, by name. */
  calls: Record<string, number>;
  note: string;
  /** Download: bytes, lines and SHA-256 of the body. */
  bytes?: number;
  lines?: number;
  sha256?: string;
  /** Request: the presigned URL of a 302. */
  location?: string;
  events?: number;
}

/** Counts the requests sent through the service's S3 and DynamoDB clients, by command. */
async function countCalls(): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  const { s3 } = await import('../shared/s3.js');
  const { ddb } = await import('../shared/db/client.js');
  for (const [client, prefix] of [
    [s3, 'S3 '],
    [ddb, 'DynamoDB '],
  ] as const) {
    (client.middlewareStack as { add: (m: unknown, o: unknown) => void }).add(
      (next: (a: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
        const name = prefix + (context.commandName ?? '?').replace(/Command$/, '');
        calls[name] = (calls[name] ?? 0) + 1;
        return next(args);
      },
      // Deserialize: past signing and retries, so each request sent counts once and a presigned URL (signed, not sent) not at all.
      { step: 'deserialize', name: 'benchCount' },
    );
  }
  return calls;
}

/** One step, in this (child) process. */
async function child(kind: string, args: string[]): Promise<StepMeasure> {
  const calls = await countCalls();
  const { jobList } = await import('../shared/jobs.js');
  const { invokeJob, scheduledEvent } = await import('../infra/local/jobs.js');
  const job = (id: string) => jobList.find((j) => j.id === id)!;
  let note = '';
  const out: Partial<StepMeasure> = {};
  let started = performance.now();
  if (kind === 'hourly') {
    const summary = (await invokeJob(job('eventsAssembleHours'), scheduledEvent())) as { built: Array<{ hours: string[]; rawObjectsRead: number }> };
    note = summary.built.map((b) => `built hour${b.hours.length > 1 ? 's' : ''} ${b.hours.join(', ')} (${b.rawObjectsRead} raw objects read)`).join('; ') || 'nothing to build';
  } else if (kind === 'daily') {
    const summary = (await invokeJob(job('eventsAssemble'), scheduledEvent())) as { files: Array<{ day: string; events?: number; upToDate: boolean; hoursBuilt?: string[] }> };
    const built = summary.files.filter((f) => !f.upToDate);
    out.events = built.reduce((n, f) => n + (f.events ?? 0), 0);
    note = `${built.length} file(s) built (${out.events.toLocaleString('en')} events), ${summary.files.length - built.length} up to date; hours built: ${built.flatMap((f) => f.hoursBuilt ?? []).length}`;
  } else if (kind === 'request') {
    const [username, apiKey, day] = args;
    const { createGateway, listen } = await import('../infra/local/gateway.js');
    const server = createGateway();
    const base = `http://127.0.0.1:${await listen(server, 0)}`;
    const token = ((await (await fetch(`${base}/v1/token?username=${username}&password=${encodeURIComponent(apiKey)}`)).json()) as { token: string }).token;
    // Warm: the route's handler module loaded, as in a warm Lambda (a day without events: the header alone).
    const warm = await fetch(`${base}/v1/newsletters/events/${EVENT}/2020-01-01`, { headers: { 'x-service-client-token': token } });
    if (warm.status !== 200) throw new Error(`warm-up: ${warm.status} ${await warm.text()}`);
    for (const k of Object.keys(calls)) delete calls[k];
    started = performance.now();
    const res = await fetch(`${base}/v1/newsletters/events/${EVENT}/${day}`, { headers: { 'x-service-client-token': token }, redirect: 'manual' });
    const body = await res.text();
    if (res.status === 302) out.location = res.headers.get('location')!;
    else if (res.status !== 200) throw new Error(`GET events: ${res.status} ${body}`);
    note = `${res.status}${res.status === 302 ? ' presigned URL' : ` inline, ${body.length} bytes`}, X-Events-Incomplete: ${res.headers.get('x-events-incomplete')}`;
    server.close();
  } else if (kind === 'download' || kind === 'get') {
    let stream: AsyncIterable<Uint8Array>;
    if (kind === 'download') {
      const res = await fetch(args[0]);
      if (res.status !== 200) throw new Error(`download: ${res.status} ${await res.text()}`);
      note = `${res.headers.get('content-type')}; ${res.headers.get('content-disposition')}`;
      stream = res.body as unknown as AsyncIterable<Uint8Array>;
    } else {
      const { s3EventStore } = await import('../shared/events/store.js');
      stream = await s3EventStore().read(args[0]);
      note = `GetObject ${args[0]}`;
    }
    const hash = createHash('sha256');
    let bytes = 0;
    let lines = 0;
    for await (const chunk of stream) {
      hash.update(chunk);
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    Object.assign(out, { bytes, lines, sha256: hash.digest('hex') });
  } else if (kind === 'whole') {
    const [clientId, day] = args;
    const { assembleEvents } = await import('../shared/events/assemble.js');
    const { s3EventStore } = await import('../shared/events/store.js');
    const result = await assembleEvents(s3EventStore(), clientId, EVENT, day, { method: 'whole', force: true });
    out.events = result.events;
    note = `${result.rawObjects} raw objects merged whole into ${result.key}`;
  } else {
    throw new Error(`unknown step ${kind}`);
  }
  return { ms: performance.now() - started, maxRssMb: process.resourceUsage().maxRSS / 1024, calls: { ...calls }, note, ...out };
}

/** Runs a step in its own process at simulated time `at`. */
function step(kind: string, at: string, args: string[] = []): Promise<StepMeasure> {
  setSimNow(at);
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--import', new URL('./sim-clock.ts', import.meta.url).pathname, import.meta.filename, `child:${kind}`, ...args], {
      env: { ...process.env, SIM_NOW: at },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.on('exit', (code, signal) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) done(JSON.parse(last) as StepMeasure);
      else fail(new Error(`step ${kind} at ${at} exited ${code ?? signal}: ${out.slice(-2000)}`));
    });
  });
}

/** Writes `events` clicks of `day` as the SES ingester does: batches of 1,000, spread over the day. Returns the raw objects written. */
async function populate(clientId: string, day: string, events: number): Promise<number> {
  const { recordEvents } = await import('../shared/events/record.js');
  const { mapLimit } = await import('../shared/events/map-limit.js');
  const BATCH = 1000;
  const batches = Math.ceil(events / BATCH);
  const dayStart = Date.parse(`${day}T00:00:00.000Z`);
  const window = 86_400_000 / batches;
  let objects = 0;
  await mapLimit(
    Array.from({ length: batches }, (_, b) => b),
    8,
    async (b) => {
      let seed = b + 1;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const n = Math.min(BATCH, events - b * BATCH);
      const end = dayStart + (b + 1) * window;
      const records = Array.from({ length: n }, (_, i) => ({
        event: EVENT,
        // Dated over the time the batch took to fill; one in 50 up to 2 minutes earlier (the SQS batching window).
        date: new Date(Math.max(dayStart, end - Math.floor(random() * (i % 50 === 0 ? 120_000 : window)))).toISOString(),
        email: `reader-${b}-${i}@example.com`,
        campaign_id: `cmp-${b % 17}`,
        newsletter_id: `nl-${b % 5}`,
        email_list_id: 1 + (b % 3),
        target_id: `article-${i % 100}`,
        target_url: `https://news.example.com/${day}/article-${i % 100}?utm_source=newsletter,daily`,
        target_position: i % 12,
      }));
      objects += new Set(records.map((r) => r.date.slice(11, 13))).size;
      await recordEvents(clientId, records);
    },
  );
  return objects;
}

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
const secs = (ms: number) => (ms / 1000).toFixed(2);
/** S3 and DynamoDB calls, shortest form: `S3 Get 212, Put 4 · DynamoDB Get 1`. */
function callsText(calls: Record<string, number>): string {
  const by = (prefix: string) =>
    Object.entries(calls)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, n]) => `${k.slice(prefix.length).replace(/Object(s?)$/, '$1').replace(/^ListObjectsV2$/, 'List').replace(/MultipartUpload$/, 'MPU')} ${n}`)
      .join(', ');
  return [by('S3 ') && `S3: ${by('S3 ')}`, by('DynamoDB ') && `DynamoDB: ${by('DynamoDB ')}`].filter(Boolean).join(' · ');
}

interface DayResult {
  events: number;
  rawObjects: number;
  rows: Array<[string, StepMeasure]>;
}

/** The scenario for one day of `events` clicks. */
async function bigDay(index: number, events: number, wholeMax: number): Promise<DayResult> {
  const { createClient } = await import('../shared/clients/clients.js');
  const { recordEvents } = await import('../shared/events/record.js');
  const { eventPaths } = await import('../shared/events/paths.js');
  const day = `2026-01-${String(20 + 2 * index).padStart(2, '0')}`;
  const next = nextDay(day);
  const username = `bench-day-${index}`;
  setSimNow(`${day}T00:00:00.000Z`);
  const { apiKey } = await createClient(username, { premiumEvents: true });
  const t = performance.now();
  const rawObjects = await populate(username, day, events);
  console.log(`\n### ${events.toLocaleString('en')} ${EVENT} events on ${day}\n`);
  console.log(`Written as the ingester writes them: ${rawObjects.toLocaleString('en')} raw objects (S3 PUTs) in ${secs(performance.now() - t)} s.\n`);
  const rows: Array<[string, StepMeasure]> = [];
  const print = (name: string, m: StepMeasure) => {
    rows.push([name, m]);
    console.log(`| ${name} | ${secs(m.ms)} | ${m.maxRssMb.toFixed(0)} | ${m.note} | ${callsText(m.calls)} |`);
  };
  console.log('| step | time s | peak RSS MB | what | S3 / DynamoDB calls |');
  console.log('|---|---:|---:|---|---|');
  const hourly: StepMeasure[] = [];
  for (let h = 1; h <= 22; h++) {
    const m = await step('hourly', `${day}T${String(h).padStart(2, '0')}:05:00.000Z`);
    hourly.push(m);
    if (h === 1 || h === 12 || h === 22) print(`hourly job at ${String(h).padStart(2, '0')}:05`, m);
  }
  const sorted = hourly.map((m) => m.ms).sort((a, b) => a - b);
  const sum = (f: (m: StepMeasure) => number) => hourly.reduce((n, m) => n + f(m), 0);
  console.log(
    `| hourly job 01:05 … 22:05 (22 runs) | median ${secs(sorted[11])}, max ${secs(sorted[21])} | ≤ ${Math.max(...hourly.map((m) => m.maxRssMb)).toFixed(0)} | ${secs(sum((m) => m.ms))} s in all | ${callsText(hourly.reduce((all, m) => { for (const [k, n] of Object.entries(m.calls)) all[k] = (all[k] ?? 0) + n; return all; }, {} as Record<string, number>))} |`,
  );
  // New records keep arriving: a batch in the open hour before each download of today.
  let late = 0;
  const arrive = async (at: string) => {
    setSimNow(at);
    await recordEvents(username, Array.from({ length: 1000 }, (_, i) => ({ event: EVENT, date: at, email: `late-${late}-${i}@example.com`, target_url: 'https://news.example.com/' })));
    late += 1000;
  };
  const get = (at: string, d = day) => step('request', at, [username, apiKey, d]);
  await arrive(`${day}T23:02:00.000Z`);
  print('GET today at 23:03, before the 23:05 run (hours 22 and 23 to assemble, both whole: the records of the whole day are written first, so this bounds the worst case)', await get(`${day}T23:03:00.000Z`));
  print('hourly job at 23:05 (hour 22: its raw variant; the request built the safe one)', await step('hourly', `${day}T23:05:00.000Z`));
  await arrive(`${day}T23:39:30.000Z`);
  const today = await get(`${day}T23:40:00.000Z`);
  print('GET today at 23:40 (hour 23, whole, to assemble again: new records)', today);
  if (!today.location) throw new Error(`today's file of ${events} events was not a presigned URL: ${today.note}`);
  const todayFile = await step('download', `${day}T23:40:10.000Z`, [today.location]);
  print(`download of today's presigned URL (${(todayFile.bytes! / 1e6).toFixed(1)} MB, ${(todayFile.lines! - 1).toLocaleString('en')} events)`, todayFile);
  print('GET today at 23:41 (nothing new: the running file as is)', await get(`${day}T23:41:00.000Z`));
  print('hourly job at 00:05 next day (hour 23)', await step('hourly', `${next}T00:05:00.000Z`));
  const daily = await step('daily', `${next}T00:15:00.000Z`);
  print('daily job at 00:15 (the day file stitched from its hours)', daily);
  const past = await get(`${next}T12:00:00.000Z`);
  print('GET the past day at 12:00', past);
  if (!past.location) throw new Error(`the past day's file was not a presigned URL: ${past.note}`);
  const pastFile = await step('download', `${next}T12:00:10.000Z`, [past.location]);
  const mbps = (m: StepMeasure) => `${((m.bytes! / 1e6) / (m.ms / 1000)).toFixed(0)} MB/s`;
  print(`download of the past day's presigned URL (${(pastFile.bytes! / 1e6).toFixed(1)} MB, ${mbps(pastFile)})`, pastFile);
  const total = events + late;
  if (pastFile.lines !== total + 1) throw new Error(`the past day's file holds ${pastFile.lines! - 1} events, expected ${total}`);
  if (daily.events !== total) throw new Error(`daily job: ${daily.events} events, expected ${total}`);
  const key = eventPaths.file(username, EVENT, day);
  const floor = await step('get', `${next}T12:01:00.000Z`, [key]);
  print(`baseline: GetObject of the same ${(floor.bytes! / 1e6).toFixed(1)} MB through the SDK (${mbps(floor)})`, floor);
  if (floor.sha256 !== pastFile.sha256) throw new Error('the presigned download differs from the stored file');
  if (events <= wholeMax) {
    const whole = await step('whole', `${next}T12:02:00.000Z`, [username, day]);
    const rate = Math.round(total / (whole.ms / 1000));
    print(`baseline: the whole day merged in one go, the request's work before hours (${rate.toLocaleString('en')} events/s: about ${(Math.floor((rate * 29) / 50_000) * 50_000).toLocaleString('en')} events in 29 s)`, whole);
    const again = await step('get', `${next}T12:03:00.000Z`, [key]);
    if (again.sha256 !== pastFile.sha256) throw new Error('the whole-day merge differs from the file stitched from hours');
    console.log(`\nThe file stitched from hours and the whole-day merge are byte-identical (SHA-256 ${pastFile.sha256!.slice(0, 16)}…).`);
  }
  return { events, rawObjects, rows };
}

async function main(): Promise<void> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const { ensureBuckets, ensureTable, freePort, localAwsEnv, startDynamoLocal, startS3Emulator } = await import('../infra/local/services.js');
  const { localNames } = await import('../infra/local/env.js');
  const sizes = (process.env.BIG_SIZES ?? '500000,5000000').split(',').map(Number);
  const wholeMax = Number(process.env.WHOLE_MAX ?? 500_000);
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-events-day-'));
  setSimNow('2026-01-19T12:00:00.000Z');
  const s3 = await startS3Emulator({ port: await freePort(), directory: path.join(dir, 's3') });
  const dynamo = await startDynamoLocal({ port: await freePort() });
  Object.assign(process.env, {
    ...localAwsEnv,
    ...localNames,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    DATA_DIR: dir,
    POWERTOOLS_LOG_LEVEL: 'WARN',
    POWERTOOLS_DEV: 'true',
  });
  const started = performance.now();
  try {
    await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
    await ensureBuckets(s3.endpoint, [localNames.EVENTS_BUCKET]);
    console.log('## Big event days (simulated clock; each step in its own process)');
    const results: DayResult[] = [];
    for (const [i, events] of sizes.entries()) results.push(await bigDay(i, events, wholeMax));
    if (results.length > 1) {
      console.log('\n| step | ' + results.map((r) => `${r.events.toLocaleString('en')}: time s / peak RSS MB`).join(' | ') + ' |');
      console.log('|---|' + results.map(() => '---:|').join(''));
      for (const [name] of results.at(-1)!.rows) {
        const key = name.replace(/ \(.*$/, '');
        const cells = results.map((r) => r.rows.find(([n]) => n.replace(/ \(.*$/, '') === key)?.[1]);
        if (cells.some((c) => !c)) continue;
        console.log(`| ${key} | ${cells.map((c) => `${secs(c!.ms)} / ${c!.maxRssMb.toFixed(0)}`).join(' | ')} |`);
      }
    }
    console.log(`\nbench:events total ${secs(performance.now() - started)} s`);
  } finally {
    await s3.stop();
    await dynamo.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode?.startsWith('child:')) {
  child(mode.slice('child:'.length), rest).then(
    (m) => console.log(JSON.stringify(m)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else if (import.meta.filename === process.argv[1] || mode === 'run') {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

export { main as runBigDays };
