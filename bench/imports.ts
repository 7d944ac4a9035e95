/**
 * `npm run bench:imports [-- --million]`: a 100,000-line CSV served from a
 * loopback HTTP server, imported (POST /v1/files service → S3 emulator →
 * worker) against DynamoDB Local: lines/s, peak RSS of this process, and the
 * ratio to a raw BatchWriteItem of the same rows in the same run.
 * `--million` adds a 1,000,000-line import reporting its peak RSS (slow on
 * DynamoDB Local). BENCH_IMPORT_LINES overrides the 100,000.
 */
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

/** The CSV, generated as it is sent (the server holds no file in memory). */
function csvStream(lines: number): Readable {
  return Readable.from(
    (function* () {
      yield 'email;subscribed;data_first_name;data_city\n';
      const batch = 2000;
      for (let start = 0; start < lines; start += batch) {
        let text = '';
        for (let i = start; i < Math.min(lines, start + batch); i++) text += `reader${i}@bench.example;true;Reader ${i};City ${i % 100}\n`;
        yield text;
      }
    })(),
  );
}

/** Samples this process's RSS; `peak()` is the highest seen since `reset()`. */
function rssSampler() {
  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
  const timer = setInterval(sample, 25);
  return { reset: () => ((peak = 0), sample()), peak: () => (sample(), Math.round(peak / 1024 / 1024)), stop: () => clearInterval(timer) };
}

const dataDir = mkdtempSync(join(tmpdir(), 'nl-bench-imports-'));
const dynamo = await startDynamoLocal({ port: await freePort() });
const s3 = await startS3Emulator({ port: await freePort(), directory: join(dataDir, 's3') });
const server = http.createServer((req, res) => {
  const lines = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('lines'));
  res.writeHead(200, { 'content-type': 'text/csv' });
  csvStream(lines).pipe(res);
});
const rss = rssSampler();
try {
  await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
  await ensureBuckets(s3.endpoint, [localNames.IMPORTS_BUCKET, localNames.EVENTS_BUCKET]);
  applyEnv(localServiceEnv({ dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, publicBaseUrl: 'http://127.0.0.1', dataDir }), { override: true });
  Object.assign(process.env, { IMPORT_ALLOW_LOOPBACK: 'true', IMPORT_MAX_BYTES: String(1024 ** 3), IMPORT_FETCH_TIMEOUT_MS: '600000' });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const fileUrl = (lines: number) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench.csv?lines=${lines}`;

  const { createClient } = await import('../shared/clients/clients.js');
  const { batchWrite } = await import('../shared/db/client.js');
  const { importFromUrl } = await import('../shared/imports/create.js');
  const { getImportedFile } = await import('../shared/imports/files.js');
  const { runImport } = await import('../shared/imports/worker.js');
  const { countSubscribers } = await import('../shared/subscribers/service.js');
  const { toItem } = await import('../shared/subscribers/store.js');
  const { defaultGuid } = await import('../shared/subscribers/rules.js');

  async function importRun(lines: number, { report = false } = {}) {
    const { client } = await createClient(`bench-${lines}-${Date.now()}`);
    let fileId = 0;
    const started = performance.now();
    const ticker = report
      ? setInterval(() => {
          if (fileId === 0) return;
          void getImportedFile(client.id, fileId).then((f) =>
            console.log(`    … ${((performance.now() - started) / 1000).toFixed(0)} s: ${f.progress.lines_read} lines applied, peak RSS so far ${rss.peak()} MiB`),
          );
        }, 60_000)
      : undefined;
    rss.reset();
    const baseline = Math.round(process.memoryUsage().rss / 1024 / 1024);
    const t0 = performance.now();
    const file = await importFromUrl(client.id, { email_list_id: client.defaultListId, url: fileUrl(lines) });
    fileId = file.id;
    const t1 = performance.now();
    const outcome = await runImport(client.id, file.id).finally(() => clearInterval(ticker));
    const t2 = performance.now();
    const peak = rss.peak();
    const final = await getImportedFile(client.id, file.id);
    const count = await countSubscribers(client.id, client.defaultListId);
    if (outcome !== 'done' || final.progress.lines_read !== lines || final.progress.created !== lines || count.subscribed !== lines) {
      throw new Error(`benchmark result is wrong: ${outcome} ${JSON.stringify(final.progress)} ${JSON.stringify(count)}`);
    }
    return { clientId: client.id, size: file.size, uploadMs: t1 - t0, workerMs: t2 - t1, totalMs: t2 - t0, baseline, peak };
  }

  const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
  console.log(`imports benchmark: ${N} lines served from a loopback HTTP server, DynamoDB Local, s3rver (2 shared cores)`);
  const run = await importRun(N);
  // Baseline: the same rows written raw into another list partition: no reads, no conditions, no counters, no events.
  const now = new Date().toISOString();
  const rawItems = Array.from({ length: N }, (_, i) => {
    const email = `reader${i}@bench.example`;
    const Item = toItem(run.clientId, 999, { email, guid: defaultGuid(email), subscribed: true, subscribedAt: now, data: { data_first_name: `Reader ${i}`, data_city: `City ${i % 100}` }, createdAt: now, updatedAt: now, version: 1 });
    return { PutRequest: { Item } };
  });
  const r0 = performance.now();
  await batchWrite(rawItems);
  const rawMs = performance.now() - r0;
  console.log(`  file: ${(run.size / 1024 / 1024).toFixed(1)} MiB; download + store in S3: ${run.uploadMs.toFixed(0)} ms`);
  console.log(`  worker (parse + apply + checkpoints): ${run.workerMs.toFixed(0)} ms  (${rate(N, run.workerMs)} lines/s)`);
  console.log(`  whole import: ${run.totalMs.toFixed(0)} ms  (${rate(N, run.totalMs)} lines/s)`);
  console.log(`  raw BatchWriteItem of the same ${N} rows (25/request, 8 in flight): ${rawMs.toFixed(0)} ms  (${rate(N, rawMs)} items/s)`);
  console.log(`  ratio import / raw: ${(run.totalMs / rawMs).toFixed(2)}x (worker only: ${(run.workerMs / rawMs).toFixed(2)}x)`);
  console.log(`  RSS of this process: ${run.baseline} MiB before, peak ${run.peak} MiB during the import`);
  if (MILLION) {
    const big = await importRun(1_000_000, { report: true });
    console.log(`  1,000,000 lines: file ${(big.size / 1024 / 1024).toFixed(1)} MiB; import ${(big.totalMs / 1000).toFixed(0)} s (${rate(1_000_000, big.totalMs)} lines/s); RSS ${big.baseline} MiB before, peak ${big.peak} MiB`);
  }
} finally {
  rss.stop();
  server.close();
  await Promise.allSettled([dynamo.stop(), s3.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
