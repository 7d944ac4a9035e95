/**
 * `npm run bench:imports [-- --million]`: a 100,000-line CSV served from a
 * loopback HTTP server, imported (POST /v1/files service → S3 emulator →
 * worker) against DynamoDB Local: lines/s, peak RSS, and the ratio to a raw
 * BatchWriteItem of the same rows in the same run. The import runs in a
 * child process of its own (as each Lambda function does), so its RSS is
 * the import's, not the emulators'. `--million` adds a 1,000,000-line import
 * reporting its peak RSS (slow on DynamoDB Local). BENCH_IMPORT_LINES
 * overrides the 100,000. `--shuffled` writes the file's addresses in a
 * scattered order (the default file lists them in key order, which lets the
 * worker read each chunk's key range with one Query; scattered, most chunks
 * fall back to BatchGetItem).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { applyEnv, localNames, localServiceEnv } from '../infra/local/env.js';
import { ensureBuckets, ensureTable, freePort, startDynamoLocal, startS3Emulator } from '../infra/local/services.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const N = Number(process.env.BENCH_IMPORT_LINES ?? 100_000);
const MILLION = process.argv.includes('--million');
const SHUFFLED = process.argv.includes('--shuffled');
/** The address of line i: in key order, or scattered (a permutation of the same addresses). */
const addressOf = (i: number, lines: number) => `reader${SHUFFLED ? (i * 7_919 + 13) % lines : i}@bench.example`;
const MiB = (bytes: number) => Math.round(bytes / 1024 / 1024);

interface ChildResult {
  fileId: number;
  size: number;
  uploadMs: number;
  workerMs: number;
  startRss: number;
  uploadPeakRss: number;
  workerPeakRss: number;
  linesRead: number;
  calls: string[];
}

/** Samples this process's RSS; `peak()` is the highest seen since `reset()`. */
function rssSampler() {
  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
  const timer = setInterval(sample, 20);
  timer.unref();
  return { reset: () => ((peak = 0), sample()), peak: () => (sample(), MiB(peak)) };
}

/** The child: one import (POST service, then the worker), as the two Lambda functions would run it. */
async function child(clientId: string, listId: number, url: string, lines: number, metered: boolean) {
  const { importFromUrl } = await import('../shared/imports/create.js');
  const { getImportedFile } = await import('../shared/imports/files.js');
  const { runImport } = await import('../shared/imports/worker.js');
  const { ddb } = await import('../shared/db/client.js');
  const { meter } = await import('./ddb-meter.js');
  const calls = meter(ddb as never);
  // Sizing every written item costs CPU on the machine that runs DynamoDB Local: only the untimed warm-up run is metered.
  calls.enable(metered);
  const rss = rssSampler();
  const startRss = MiB(process.memoryUsage().rss);
  const t0 = performance.now();
  const file = await importFromUrl(clientId, { email_list_id: listId, url });
  const t1 = performance.now();
  const uploadPeakRss = rss.peak();
  rss.reset();
  calls.reset();
  const ticker = setInterval(() => {
    void getImportedFile(clientId, file.id).then((f) => console.error(`    … ${((performance.now() - t1) / 1000).toFixed(0)} s: ${f.progress.lines_read}/${lines} lines, worker peak RSS so far ${rss.peak()} MiB`));
  }, 60_000);
  // A line of its own before the worker starts (bench/subscribers.ts starts its small writes on it).
  console.log(JSON.stringify({ workerStarted: file.id }));
  const outcome = await runImport(clientId, file.id).finally(() => clearInterval(ticker));
  const t2 = performance.now();
  const workerPeakRss = rss.peak();
  const final = await getImportedFile(clientId, file.id);
  if (outcome !== 'done') throw new Error(`import ended ${outcome}: ${JSON.stringify(final)}`);
  const result: ChildResult = { fileId: file.id, size: file.size, uploadMs: t1 - t0, workerMs: t2 - t1, startRss, uploadPeakRss, workerPeakRss, linesRead: final.progress.lines_read, calls: calls.report(lines) };
  console.log(JSON.stringify(result));
}

/** The CSV, generated as it is sent (the server holds no file in memory). */
function csvStream(lines: number): Readable {
  return Readable.from(
    (function* () {
      yield 'email;subscribed;data_first_name;data_city\n';
      const batch = 2000;
      for (let start = 0; start < lines; start += batch) {
        let text = '';
        for (let i = start; i < Math.min(lines, start + batch); i++) text += `${addressOf(i, lines)};true;Reader ${i};City ${i % 100}\n`;
        yield text;
      }
    })(),
  );
}

function runChild(args: string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--child', ...args], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0) resolve(JSON.parse(last) as ChildResult);
      else reject(new Error(`import child exited ${code}: ${out}`));
    });
  });
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'nl-bench-imports-'));
  const dynamo = await startDynamoLocal({ port: await freePort() });
  const s3 = await startS3Emulator({ port: await freePort(), directory: join(dataDir, 's3') });
  const server = http.createServer((req, res) => {
    const lines = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('lines'));
    res.writeHead(200, { 'content-type': 'text/csv' });
    csvStream(lines).pipe(res);
  });
  try {
    await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
    await ensureBuckets(s3.endpoint, [localNames.IMPORTS_BUCKET, localNames.EVENTS_BUCKET]);
    applyEnv(localServiceEnv({ dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, publicBaseUrl: 'http://127.0.0.1', dataDir }), { override: true });
    Object.assign(process.env, { IMPORT_ALLOW_LOOPBACK: 'true', IMPORT_MAX_BYTES: String(1024 ** 3), IMPORT_FETCH_TIMEOUT_MS: '900000' });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const fileUrl = (lines: number) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench.csv?lines=${lines}`;

    const { createClient } = await import('../shared/clients/clients.js');
    const { batchWrite } = await import('../shared/db/client.js');
    const { countSubscribers } = await import('../shared/subscribers/service.js');
    const { toItem } = await import('../shared/subscribers/store.js');
    const { defaultGuid } = await import('../shared/subscribers/rules.js');

    async function importRun(lines: number, metered = false) {
      const { client } = await createClient(`bench-${lines}-${Date.now()}`);
      const run = await runChild([client.id, String(client.defaultListId), fileUrl(lines), String(lines), String(metered)]);
      const count = await countSubscribers(client.id, client.defaultListId);
      if (run.linesRead !== lines || count.subscribed !== lines) throw new Error(`benchmark result is wrong: ${JSON.stringify(run)} ${JSON.stringify(count)}`);
      return { ...run, clientId: client.id, totalMs: run.uploadMs + run.workerMs };
    }

    const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
    console.log(`imports benchmark: ${N} lines served from a loopback HTTP server, DynamoDB Local, s3rver; the import in its own process`);
    // DynamoDB Local runs its first calls of each kind on a cold JVM: a metered 10,000-line import warms it up and
    // counts the calls per line; then the raw baseline is measured before and after the timed import (the faster counts).
    const warm = await importRun(10_000, true);
    const now = new Date().toISOString();
    const rawItems = (listId: number) =>
      Array.from({ length: N }, (_, i) => {
        const email = addressOf(i, N); // the file's rows in the file's order (DynamoDB Local inserts keys in order faster)
        const data = { data_first_name: `Reader ${i}`, data_city: `City ${i % 100}` };
        return { PutRequest: { Item: toItem(warm.clientId, listId, { email, guid: defaultGuid(email), subscribed: true, subscribedAt: now, data, createdAt: now, updatedAt: now, version: 1 }) } };
      });
    // Baseline: the same rows written raw into another list partition: no reads, no conditions, no counters, no events.
    const timedRaw = async (listId: number) => {
      const items = rawItems(listId);
      const r0 = performance.now();
      await batchWrite(items);
      return performance.now() - r0;
    };
    const rawBefore = await timedRaw(998);
    const run = await importRun(N);
    const rawAfter = await timedRaw(999);
    const rawMs = Math.min(rawBefore, rawAfter);
    console.log(`  file: ${(run.size / 1024 / 1024).toFixed(1)} MiB; download + store in S3: ${run.uploadMs.toFixed(0)} ms, peak RSS ${run.uploadPeakRss} MiB (process start ${run.startRss} MiB)`);
    console.log(`  worker (parse + apply + checkpoints): ${run.workerMs.toFixed(0)} ms  (${rate(N, run.workerMs)} lines/s), peak RSS ${run.workerPeakRss} MiB`);
    console.log(`  whole import: ${run.totalMs.toFixed(0)} ms  (${rate(N, run.totalMs)} lines/s)`);
    console.log(`  raw BatchWriteItem of the same ${N} rows (25/request, 8 in flight): ${rawMs.toFixed(0)} ms  (${rate(N, rawMs)} items/s; before ${rawBefore.toFixed(0)} ms, after ${rawAfter.toFixed(0)} ms, the faster is the baseline)`);
    console.log(`  ratio import / raw: ${(run.totalMs / rawMs).toFixed(2)}x (worker only: ${(run.workerMs / rawMs).toFixed(2)}x)`);
    console.log(`  DynamoDB calls of the worker per line (counted on the 10,000-line warm-up import):\n${warm.calls.map((l) => `    ${l}`).join('\n')}`);
    if (MILLION) {
      const big = await importRun(1_000_000);
      console.log(
        `  1,000,000 lines: file ${(big.size / 1024 / 1024).toFixed(1)} MiB; download + store ${(big.uploadMs / 1000).toFixed(1)} s, peak RSS ${big.uploadPeakRss} MiB; worker ${(big.workerMs / 1000).toFixed(0)} s (${rate(1_000_000, big.workerMs)} lines/s), peak RSS ${big.workerPeakRss} MiB`,
      );
    }
  } finally {
    server.close();
    await Promise.allSettled([dynamo.stop(), s3.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  const [, , , clientId, listId, url, lines, metered] = process.argv;
  await child(clientId, Number(listId), url, Number(lines), metered === 'true');
} else {
  await main();
}
