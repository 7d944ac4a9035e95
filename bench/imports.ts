/**
 * `npm run bench:imports [-- --million] [-- --shuffled]`: a 100,000-line CSV
 * served from a loopback HTTP server, imported (POST /v1/files service → S3
 * emulator → worker) against DynamoDB Local: lines/s, peak RSS, and the ratio
 * to a raw BatchWriteItem of the same rows in the same run. Each run imports
 * the file twice: into a new list alone, and into a list of 2,000 members
 * while small writes (single-subscriber POSTs, opt-in confirmations,
 * unsubscribes, users/delete; bench/small-writes.ts) go to that list through
 * the local gateway; and, as a control, into another such list while the
 * same small writes go to a third list (the same load on the machine,
 * nothing shared with the import); and the raw BatchWriteItem of the rows into a list
 * of 2,000 members while the same small writes go to it (what the stream
 * costs plain writes on this machine). BENCH_RUNS runs (default 3), after a
 * run 0 that warms DynamoDB Local and the handlers up and is not counted;
 * every other run takes its phases in the reverse order; medians of the
 * ratios and of the small writes' p50/p99. Each phase also reports its
 * machine CPU over its timed part (DynamoDB Local's JVM, the import's
 * process, this process: the gateway's handlers, s3rver, the raw writes;
 * bench/local-stack.ts cpuSpan): on this 2-core machine a phase's time
 * follows the CPU all of them need, so the split says where a difference
 * goes (docs/benchmarks.md). Exits non-zero when the median
 * ratio of the import with small writes to the raw beside the same small
 * writes is above 1.5 (alone: above 1.25), a small write is not 200 or its kind's p99 is
 * above 1 s, or a count is not its recount. The import runs in a
 * child process of its own (as each Lambda function does), so its RSS is the
 * import's, not the emulators'; with the worker function's young generation
 * (bench/small-writes.ts), and warm: a 5,000-line import into a list of its
 * own runs first, untimed, as the raw baseline's writes run in this warm
 * process (`BENCH_COLD_IMPORT=1` leaves it out). `--million` adds a 1,000,000-line import
 * reporting its peak RSS (slow on DynamoDB Local). BENCH_IMPORT_LINES
 * overrides the 100,000. `--shuffled` writes the file's addresses in a
 * scattered order (the default file lists them in key order, which lets the
 * worker read each chunk's key range with one Query; scattered, most chunks
 * fall back to BatchGetItem).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { cpuSpan, startBenchStack } from './local-stack.js';
import { checkRawItem, clientWithMembers, describeSmall, importRawItems, type ImportChildResult, importWithSmallWrites, median, overall, rawBesideSmallWrites, runImportChild, smallFailures } from './small-writes.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// The handlers under the local gateway log through Powertools (a warning per request): errors only here.
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
const N = Number(process.env.BENCH_IMPORT_LINES ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MILLION = process.argv.includes('--million');
const SHUFFLED = process.argv.includes('--shuffled');
/** Members of the list the small writes go to (they unsubscribe and delete some of them). */
const MEMBERS = 2_000;
/** The bounds: an import with small writes running within 1.5× the raw writes beside them; alone within 1.25×. */
const RATIO_BOUND = 1.5;
const ALONE_BOUND = 1.25;
/** The file's columns (the rows: address, true, Reader i, City i % 100). */
const HEADER = ['email', 'subscribed', 'data_first_name', 'data_city'];
/** The address of line i: in key order, or scattered (a permutation of the same addresses). */
const addressOf = (i: number, lines: number) => `reader${SHUFFLED ? (i * 7_919 + 13) % lines : i}@bench.example`;
const MiB = (bytes: number) => Math.round(bytes / 1024 / 1024);

/**
 * Samples this process's RSS every 100 ms; `peak()` is the highest seen since `reset()`. `process.memoryUsage.rss()`
 * only, and not often: `process.memoryUsage()` also walks the V8 heap, a CPU cost the raw baseline does not pay.
 */
function rssSampler() {
  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  const timer = setInterval(sample, 100);
  timer.unref();
  return { reset: () => ((peak = 0), sample()), peak: () => (sample(), MiB(peak)) };
}

/**
 * Lines of the import a child runs first into a list of its own, untimed: the timed import then runs warm, as the
 * raw baseline's writes and a reused Lambda container do (cold adds compiling and the first connections).
 * `BENCH_COLD_IMPORT=1` leaves it out.
 */
const WARM_UP_LINES = 5_000;

/** The child: one import (POST service, then the worker), as the two Lambda functions would run it. */
async function child(clientId: string, listId: number, url: string, lines: number, metered: boolean) {
  const { importFromUrl } = await import('../shared/imports/create.js');
  const { getImportedFile } = await import('../shared/imports/files.js');
  const { runImport } = await import('../shared/imports/worker.js');
  if (process.env.BENCH_COLD_IMPORT !== '1') {
    const { createList } = await import('../shared/lists/lists.js');
    const scratch = await createList(clientId, 'bench warm-up');
    const warmUrl = new URL(url);
    warmUrl.searchParams.set('lines', String(WARM_UP_LINES));
    const warm = await importFromUrl(clientId, { email_list_id: scratch.id, url: warmUrl.href });
    if ((await runImport(clientId, warm.id)) !== 'done') throw new Error('the warm-up import did not end');
  }
  const { ddb } = await import('../shared/db/client.js');
  const { meter } = await import('./ddb-meter.js');
  const calls = meter(ddb as never);
  // Sizing every written item costs CPU on the machine that runs DynamoDB Local: only the untimed warm-up run is metered.
  calls.enable(metered);
  const rss = rssSampler();
  const startRss = MiB(process.memoryUsage().rss);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const file = await importFromUrl(clientId, { email_list_id: listId, url });
  const t1 = performance.now();
  const uploadPeakRss = rss.peak();
  rss.reset();
  calls.reset();
  const ticker = setInterval(() => {
    void getImportedFile(clientId, file.id).then((f) => console.error(`    … ${((performance.now() - t1) / 1000).toFixed(0)} s: ${f.progress.lines_read}/${lines} lines, worker peak RSS so far ${rss.peak()} MiB`));
  }, 60_000);
  // A line of its own before the worker starts (the small writes start on it: bench/small-writes.ts).
  console.log(JSON.stringify({ workerStarted: file.id }));
  const outcome = await runImport(clientId, file.id).finally(() => clearInterval(ticker));
  const t2 = performance.now();
  const used = process.cpuUsage(cpu0);
  const workerPeakRss = rss.peak();
  const final = await getImportedFile(clientId, file.id);
  if (outcome !== 'done') throw new Error(`import ended ${outcome}: ${JSON.stringify(final)}`);
  const result: ImportChildResult = { fileId: file.id, size: file.size, uploadMs: t1 - t0, workerMs: t2 - t1, startRss, uploadPeakRss, workerPeakRss, linesRead: final.progress.lines_read, calls: calls.report(lines), cpuMs: (used.user + used.system) / 1000 };
  console.log(JSON.stringify(result));
}

/** The CSV, generated as it is sent (the server holds no file in memory). */
function csvStream(lines: number): Readable {
  return Readable.from(
    (function* () {
      yield `${HEADER.join(';')}\n`;
      const batch = 2000;
      for (let start = 0; start < lines; start += batch) {
        let text = '';
        for (let i = start; i < Math.min(lines, start + batch); i++) text += `${addressOf(i, lines)};true;Reader ${i};City ${i % 100}\n`;
        yield text;
      }
    })(),
  );
}

async function main() {
  const stack = await startBenchStack();
  const server = http.createServer((req, res) => {
    const lines = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('lines'));
    res.writeHead(200, { 'content-type': 'text/csv' });
    csvStream(lines).pipe(res);
  });
  const failures: string[] = [];
  try {
    Object.assign(process.env, { IMPORT_ALLOW_LOOPBACK: 'true', IMPORT_MAX_BYTES: String(1024 ** 3), IMPORT_FETCH_TIMEOUT_MS: '900000' });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const fileUrl = (lines: number) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench.csv?lines=${lines}`;

    const { createClient } = await import('../shared/clients/clients.js');
    const { batchWrite } = await import('../shared/db/client.js');
    const service = await import('../shared/subscribers/service.js');
    // Counts are exact once the table stream has drained.
    const countSubscribers = async (clientId: string, listId: number) => {
      await stack.streamDrained();
      return service.countSubscribers(clientId, listId);
    };
    const { readSubscribers } = await import('../shared/subscribers/store.js');
    const { recountList } = await import('../shared/subscribers/recount.js');

    // The CPU time of DynamoDB Local's JVM and of this process (the gateway's handlers, s3rver, the small writes'
    // client, and the raw writes) over a phase's timed part; the import process counts its own (ImportChildResult).
    const span = () => cpuSpan(stack.dynamoPid);
    type Cpu = ReturnType<ReturnType<typeof span>>;
    /** A phase's machine CPU: DynamoDB Local, the import's process (none for the raw writes) and this process, in s. */
    const machine = (cpu: Cpu, importCpuMs = 0) => ({ dynamo: (cpu.dynamo ?? Number.NaN) / 1000, importer: importCpuMs / 1000, self: cpu.self / 1000, all: ((cpu.dynamo ?? Number.NaN) + importCpuMs + cpu.self) / 1000 });
    const describeCpu = (m: ReturnType<typeof machine>) => `${m.all.toFixed(1)} s (DynamoDB Local ${m.dynamo.toFixed(1)}${m.importer > 0 ? `, import process ${m.importer.toFixed(1)}` : ''}, bench process ${m.self.toFixed(1)})`;

    async function importRun(lines: number, metered = false) {
      const { client } = await createClient(`bench-${lines}-${Date.now()}`);
      const took = span();
      const run = await runImportChild([client.id, String(client.defaultListId), fileUrl(lines), String(lines), String(metered)]);
      const cpu = machine(took(), run.cpuMs);
      const count = await countSubscribers(client.id, client.defaultListId);
      if (run.linesRead !== lines || count.subscribed !== lines) throw new Error(`benchmark result is wrong: ${JSON.stringify(run)} ${JSON.stringify(count)}`);
      return { ...run, clientId: client.id, listId: client.defaultListId, totalMs: run.uploadMs + run.workerMs, cpu };
    }

    const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
    console.log(`imports benchmark: ${N} lines served from a loopback HTTP server, DynamoDB Local, s3rver; the import in its own process; ${RUNS} run(s)`);
    // DynamoDB Local runs its first calls of each kind on a cold JVM: a metered 10,000-line import warms it up and
    // counts the calls per line; then the raw baseline is measured before and after each run (the faster counts).
    const warm = await importRun(10_000, true);
    // Baseline: the same rows written raw into another list partition: no reads, no conditions (their stream records
    // are counted as the import's are). The items are the import's own (importRawItems), checked against one the warm-up wrote.
    const rows = function* () {
      for (let i = 0; i < N; i++) yield [addressOf(i, N), 'true', `Reader ${i}`, `City ${i % 100}`];
    };
    const rawItems = async (listId: number) =>
      (await importRawItems(warm.clientId, listId, warm.fileId, HEADER, rows())).map((Item) => ({ PutRequest: { Item } }));
    {
      const [raw] = await importRawItems(warm.clientId, warm.listId, warm.fileId, HEADER, [[addressOf(0, 10_000), 'true', 'Reader 0', 'City 0']]);
      const written = (await readSubscribers(warm.clientId, warm.listId, [addressOf(0, 10_000)])).get(addressOf(0, 10_000)) as Record<string, unknown> | undefined;
      console.log(`  ${checkRawItem(raw, written, "the import's")}`);
    }
    let rawList = 900;
    const timedRaw = async () => {
      const items = await rawItems(rawList++);
      const took = span();
      const r0 = performance.now();
      await batchWrite(items);
      return { ms: performance.now() - r0, cpu: machine(took()) };
    };
    type MachineCpu = ReturnType<typeof machine>;
    const runs: Array<{ rawMs: number; rawBefore: number; rawAfter: number; rawBusyMs: number; alone: Awaited<ReturnType<typeof importRun>>; busyMs: number; busy: ImportChildResult; controlMs: number; small: ReturnType<typeof overall>; rawCpu: MachineCpu; busyCpu: MachineCpu; rawBusyCpu: MachineCpu }> = [];
    let rawBefore = await timedRaw();
    // Run 0 warms up, and is not counted: DynamoDB Local's JVM and the gateway's handlers compile the small writes'
    // paths (transactions, conditional updates, reads) only once they run, so the first imports beside them are far
    // slower. The warm-up above runs no small write.
    for (let r = 0; r <= RUNS; r++) {
      const label = r === 0 ? 'warm-up (not counted)' : `run ${r}`;
      const alone = await importRun(N);
      // The phases of a run, in turn: the import with small writes to its list, the control and the raw beside the
      // small writes; every other run in the reverse order, so that neither of the two the bound compares (the import
      // with small writes and the raw beside them) always runs on the warmer or the more loaded DynamoDB Local.
      const busyPhase = async () => {
        const target = await clientWithMembers(stack.url, `imports-${r}`, MEMBERS);
        const took = span();
        const { run, small } = await importWithSmallWrites(stack.url, target, target.listId, MEMBERS, `imports${r}`, [target.id, String(target.listId), fileUrl(N), String(N), 'false']);
        const cpu = machine(took(), run.cpuMs);
        return { run, small, cpu, count: await countSubscribers(target.id, target.listId), truth: await recountList(target.id, target.listId) };
      };
      // The control: the same import and the same stream of small writes, but to another list (the same load on this
      // machine, nothing shared with the import): what the small writes cost the import through the shared CPU alone.
      const controlPhase = async () => {
        const [controlTarget, elsewhere] = [await clientWithMembers(stack.url, `control-${r}`, MEMBERS), await clientWithMembers(stack.url, `elsewhere-${r}`, MEMBERS)];
        const { run } = await importWithSmallWrites(stack.url, elsewhere, elsewhere.listId, MEMBERS, `elsewhere${r}`, [controlTarget.id, String(controlTarget.listId), fileUrl(N), String(N), 'false']);
        return run.uploadMs + run.workerMs;
      };
      // The raw baseline beside the same stream of small writes to its list (a list of MEMBERS members, the raw items
      // written into its partition while the small writes go to it): what the stream costs plain writes on this
      // machine. The import with small writes against it is what the write path itself costs under that traffic.
      const rawPhase = () => rawBesideSmallWrites(stack.url, `rawbusy${r}`, MEMBERS, (clientId, listId) => importRawItems(clientId, listId, warm.fileId, HEADER, rows()), span);
      let busyOut!: Awaited<ReturnType<typeof busyPhase>>;
      let controlMs = 0;
      let rawBeside!: Awaited<ReturnType<typeof rawPhase>>;
      const phases = [async () => (busyOut = await busyPhase()), async () => (controlMs = await controlPhase()), async () => (rawBeside = await rawPhase())];
      for (const phase of r % 2 === 0 ? phases.reverse() : phases) await phase();
      const { run: busy, small, count, truth, cpu: busyCpu } = busyOut;
      const rawBusyMs = rawBeside.ms;
      const rawBusyCpu = machine(rawBeside.cpu!);
      const rawSmall = overall(rawBeside.small);
      failures.push(...smallFailures(`${label}, raw beside the small writes`, rawBeside.small));
      const rawAfter = await timedRaw();
      const fasterRaw = rawBefore.ms <= rawAfter.ms ? rawBefore : rawAfter;
      const rawMs = fasterRaw.ms;
      const busyMs = busy.uploadMs + busy.workerMs;
      if (r > 0) runs.push({ rawMs, rawBefore: rawBefore.ms, rawAfter: rawAfter.ms, rawBusyMs, alone, busyMs, busy, controlMs, small: overall(small), rawCpu: fasterRaw.cpu, busyCpu, rawBusyCpu });
      console.log(`  ${label}${r % 2 === 0 ? ' (raw beside the small writes, control, then the import with them)' : ''}: raw ${rawMs.toFixed(0)} ms (before ${rawBefore.ms.toFixed(0)}, after ${rawAfter.ms.toFixed(0)}; the faster counts)`);
      console.log(`    alone, new list: ${alone.totalMs.toFixed(0)} ms (worker ${alone.workerMs.toFixed(0)} ms, ${rate(N, alone.workerMs)} lines/s, peak RSS ${alone.workerPeakRss} MiB)  ratio ${(alone.totalMs / rawMs).toFixed(2)}x`);
      console.log(`    with small writes, list of ${MEMBERS} members: ${busyMs.toFixed(0)} ms (worker ${busy.workerMs.toFixed(0)} ms)  ratio ${(busyMs / rawMs).toFixed(2)}x`);
      console.log(describeSmall(small, '      '));
      console.log(`    control, the same small writes to another list: ${controlMs.toFixed(0)} ms  ratio ${(controlMs / rawMs).toFixed(2)}x`);
      console.log(`    raw beside the same small writes to its list: ${rawBusyMs.toFixed(0)} ms (${(rawBusyMs / rawMs).toFixed(2)}x raw alone; small writes p50 ${rawSmall.p50.toFixed(0)} ms, p99 ${rawSmall.p99.toFixed(0)} ms); the import with small writes against it: ${(busyMs / rawBusyMs).toFixed(2)}x`);
      console.log(`      count ${JSON.stringify(count)} recount ${JSON.stringify(truth)}`);
      console.log(`    machine CPU: raw ${describeCpu(fasterRaw.cpu)}; import alone ${describeCpu(alone.cpu)}: ${(alone.cpu.all / fasterRaw.cpu.all).toFixed(2)}x`);
      console.log(`      raw beside the small writes ${describeCpu(rawBusyCpu)}; import with them ${describeCpu(busyCpu)}: ${(busyCpu.all / rawBusyCpu.all).toFixed(2)}x`);
      failures.push(...smallFailures(label, small));
      if (JSON.stringify(count) !== JSON.stringify(truth)) failures.push(`${label}: count ${JSON.stringify(count)} ≠ recount ${JSON.stringify(truth)}`);
      if (busy.linesRead !== N) failures.push(`${label}: the import with small writes read ${busy.linesRead} of ${N} lines`);
      rawBefore = rawAfter;
    }
    const first = runs[0];
    const medianOf = (pick: (run: (typeof runs)[number]) => number) => median(runs.map(pick));
    const aloneRatio = medianOf((run) => run.alone.totalMs / run.rawMs);
    const busyRatio = medianOf((run) => run.busyMs / run.rawMs);
    const busyToBusyRaw = medianOf((run) => run.busyMs / run.rawBusyMs);
    const list = (pick: (run: (typeof runs)[number]) => number, digits = 2) => runs.map((run) => pick(run).toFixed(digits)).join(', ');
    console.log(`  file: ${(first.alone.size / 1024 / 1024).toFixed(1)} MiB; download + store in S3: ${first.alone.uploadMs.toFixed(0)} ms, peak RSS ${first.alone.uploadPeakRss} MiB (process start ${first.alone.startRss} MiB)`);
    console.log(`  raw BatchWriteItem of the same ${N} rows (25/request, 8 in flight): ${list((run) => run.rawMs, 0)} ms (median ${medianOf((run) => run.rawMs).toFixed(0)} ms)`);
    console.log(`  ratio import / raw, alone (new list): ${list((run) => run.alone.totalMs / run.rawMs)}  median ${aloneRatio.toFixed(2)}x (worker only: ${medianOf((run) => run.alone.workerMs / run.rawMs).toFixed(2)}x)`);
    console.log(`  ratio import / raw, with small writes (list of ${MEMBERS}): ${list((run) => run.busyMs / run.rawMs)}  median ${busyRatio.toFixed(2)}x`);
    console.log(`  ratio import with small writes / raw beside the same small writes: ${list((run) => run.busyMs / run.rawBusyMs)}  median ${busyToBusyRaw.toFixed(2)}x (bound ${RATIO_BOUND}x); that raw against raw alone: ${list((run) => run.rawBusyMs / run.rawMs)}  median ${medianOf((run) => run.rawBusyMs / run.rawMs).toFixed(2)}x`);
    console.log(`  ratio import / raw, small writes to another list (control): ${list((run) => run.controlMs / run.rawMs)}  median ${medianOf((run) => run.controlMs / run.rawMs).toFixed(2)}x`);
    const share = (pick: (run: (typeof runs)[number]) => MachineCpu, part: 'dynamo' | 'importer' | 'self') => medianOf((run) => pick(run)[part]).toFixed(1);
    console.log(
      `  machine CPU (DynamoDB Local + the import process + the bench process, over the timed part), import / raw: alone ${list((run) => run.alone.cpu.all / run.rawCpu.all)}  median ${medianOf((run) => run.alone.cpu.all / run.rawCpu.all).toFixed(2)}x; ` +
        `with small writes / raw beside them ${list((run) => run.busyCpu.all / run.rawBusyCpu.all)}  median ${medianOf((run) => run.busyCpu.all / run.rawBusyCpu.all).toFixed(2)}x`,
    );
    console.log(
      `    medians in s: raw beside the small writes: DynamoDB Local ${share((run) => run.rawBusyCpu, 'dynamo')}, bench process ${share((run) => run.rawBusyCpu, 'self')} (the raw writes' and the small writes' handlers); ` +
        `import with them: DynamoDB Local ${share((run) => run.busyCpu, 'dynamo')}, import process ${share((run) => run.busyCpu, 'importer')}, bench process ${share((run) => run.busyCpu, 'self')} (the handlers, s3rver)`,
    );
    console.log(`  small writes during the import: p50 ${list((run) => run.small.p50, 0)} ms (median ${medianOf((run) => run.small.p50).toFixed(0)}), p99 ${list((run) => run.small.p99, 0)} ms (median ${medianOf((run) => run.small.p99).toFixed(0)}), ${list((run) => run.small.n, 0)} writes`);
    console.log(`  DynamoDB calls of the worker per line (counted on the 10,000-line warm-up import):\n${warm.calls.map((l) => `    ${l}`).join('\n')}`);
    if (aloneRatio > ALONE_BOUND) failures.push(`the median ratio of the import alone is ${aloneRatio.toFixed(2)}x of raw, above ${ALONE_BOUND}x`);
    if (busyToBusyRaw > RATIO_BOUND) failures.push(`the median ratio with small writes is ${busyToBusyRaw.toFixed(2)}x of raw beside the same small writes, above ${RATIO_BOUND}x`);
    if (MILLION) {
      const big = await importRun(1_000_000);
      console.log(
        `  1,000,000 lines: file ${(big.size / 1024 / 1024).toFixed(1)} MiB; download + store ${(big.uploadMs / 1000).toFixed(1)} s, peak RSS ${big.uploadPeakRss} MiB; worker ${(big.workerMs / 1000).toFixed(0)} s (${rate(1_000_000, big.workerMs)} lines/s), peak RSS ${big.workerPeakRss} MiB`,
      );
    }
  } finally {
    server.close();
    await stack.stop();
  }
  if (failures.length > 0) {
    console.error(`FAILED:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

if (process.argv[2] === '--child') {
  const [, , , clientId, listId, url, lines, metered] = process.argv;
  await child(clientId, Number(listId), url, Number(lines), metered === 'true');
} else {
  await main();
}
