/**
 * Newsletter picks (`npm run bench:newsletter-picks`): members per second and DynamoDB calls and read units per
 * member, against DynamoDB Local (in memory) and the S3 emulator, for the capacity model (docs/capacity.md
 * "Newsletter picks").
 *
 * The site: a generated click log (bench/recos-data.ts: articles with themes and decaying popularity, readers with
 * favourite themes, sessions that follow stories) of 100,000 page views by 8,000 readers over 30 days on 3,000
 * articles, replayed through the tracking code into the memory store and bulk-loaded as the table items the
 * DynamoDB store writes. The list: 5,000 subscribed members (applied through the subscriber write path, with
 * `data_*` fields as imports carry them) whose guids are the log's readers 0..4,999, so members have the log's
 * spread of histories (many a handful of reads, a few hundred of them none) — as a newsletter's readers are
 * the site's readers under their subscriber guid.
 *
 * Measured: the job's path (runPicks writing NDJSON lines, every member), 3 runs, medians; DynamoDB calls by
 * command and the read units they cost (BatchGetItem strongly consistent: 1 unit per started 4 KB of each item;
 * Query and GetItem eventually consistent: ½ unit per started 4 KB of the call's items), counted in a 4th run; then direct answers through the local gateway (lists of 1,000 and
 * 1,500 members, 10 rows: the direct bound is 15,000 picks), their time and size.
 */
import { generateClickLog } from './recos-data.js';
import { startBenchStack } from './local-stack.js';
import { itemBytes } from './ddb-meter.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const MEMBERS = Number(args.get('members') ?? 5000);
const RUNS = Number(args.get('runs') ?? 3);
const ROWS = Number(args.get('rows') ?? 10);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const stack = await startBenchStack();
  try {
    const { ddb, batchWrite } = await import('../shared/db/client.js');
    const { createBlock, createClient } = await import('../shared/clients/clients.js');
    const { MemoryStore } = await import('../test/helpers/recos-memory-store.js');
    const { trackPageView } = await import('../test/helpers/recos-oracle.js');
    const { recosItems } = await import('../shared/recos/dynamo-items.js');
    const { applySubscribers } = await import('../shared/subscribers/index.js');
    const { createList } = await import('../shared/lists/lists.js');
    const { planPicks, runPicks } = await import('../shared/picks/picks.js');
    const { PicksStore } = await import('../shared/picks/batch-store.js');

    const t0 = Date.now();
    const log = generateClickLog({ articles: 3000, views: 100_000, readers: 8000, days: 30, seed: 7 });
    const clientId = `bench-${Date.now().toString(36)}`;
    const { apiKey } = await createClient(clientId, { siteHosts: ['gazette.example'] });
    const blockKey = await createBlock(clientId);
    const store = new MemoryStore();
    const shift = Math.floor(Date.now() / 1000) - log.end - 60;
    for (const v of log.views) {
      const a = log.articles[v.article];
      await trackPageView(store, clientId, { userId: `reader-${v.reader}`, url: a.url, title: a.title, category: a.category, themes: a.themes, published: a.published + shift }, v.t + shift);
    }
    const now = Math.floor(Date.now() / 1000);
    const items = [
      ...[...store.articleMap.get(clientId)!.values()].map((a) => recosItems.article(clientId, a)),
      ...[...store.readerMap.get(clientId)!.values()].map((r) => recosItems.reader(clientId, r)),
      ...[...store.covisitMap.get(clientId)!.entries()].map(([g, c]) => recosItems.covisits(clientId, g, c, now)),
      recosItems.fresh(clientId, store.freshMap.get(clientId) ?? []),
    ];
    await batchWrite(items.map((Item) => ({ PutRequest: { Item } })));
    const readers = store.readerMap.get(clientId)!;
    const lineOf = (i: number) => ({ line: i + 1, email: `member${String(i).padStart(6, '0')}@example.com`, guid: `reader-${i}`, subscribed: true, data: { first_name: `Name ${i}`, city: 'Lyon' } });
    const lists: Record<number, number> = {};
    for (const size of [MEMBERS, 1000, 1500]) {
      const list = await createList(clientId, `picks ${size}`);
      lists[size] = list.id;
      for (let i = 0; i < size; i += 1000) await applySubscribers(clientId, list.id, Array.from({ length: Math.min(1000, size - i) }, (_, k) => lineOf(i + k)));
    }
    const histories = Array.from({ length: MEMBERS }, (_, i) => readers.get(`reader-${i}`)?.reads.length ?? 0);
    const withReads = histories.filter((n) => n > 0);
    console.log(
      `Loaded ${store.articleMap.get(clientId)!.size} articles, ${readers.size} readers from ${log.views.length} page views, lists of ${MEMBERS}, 1000 and 1500 members in ${((Date.now() - t0) / 1000).toFixed(1)} s; ` +
        `of the ${MEMBERS} members ${withReads.length} have reads (median ${median(withReads)}, max ${Math.max(...withReads)} kept), ${MEMBERS - withReads.length} none`,
    );

    // Calls, by command, with the read units they cost.
    let metering = false;
    const tally = new Map<string, { calls: number; items: number; units: number }>();
    ddb.middlewareStack.add(
      (next, context) => async (input) => {
        const out = await next(input);
        if (!metering) return out;
        const name = (context.commandName ?? '?').replace(/Command$/, '');
        const t = tally.get(name) ?? { calls: 0, items: 0, units: 0 };
        t.calls++;
        const o = (out.output ?? {}) as { Responses?: Record<string, Array<Record<string, never>>>; Items?: Array<Record<string, never>>; Item?: Record<string, never> };
        // BatchGetItem (shared/db/client.ts batchGet) reads strongly consistent: 1 unit per started 4 KB of each item.
        for (const list of Object.values(o.Responses ?? {})) {
          for (const item of list) {
            t.items++;
            t.units += Math.ceil(itemBytes(item) / 4096);
          }
        }
        if (o.Items) {
          t.items += o.Items.length;
          t.units += Math.ceil(o.Items.reduce((s, item) => s + itemBytes(item), 0) / 4096) / 2;
        }
        if (o.Item) {
          t.items++;
          t.units += Math.ceil(itemBytes(o.Item) / 4096) / 2;
        }
        tally.set(name, t);
        return out;
      },
      { step: 'initialize', name: 'picksBenchMeter' },
    );

    const run = async () => {
      const plan = await planPicks(clientId, lists[MEMBERS], blockKey, ROWS);
      let bytes = 0;
      let picks = 0;
      let lines = 0;
      // A new store per run: its first request reads the shared context and the popular list (the container's copies dropped).
      const { dropReadCaches } = await import('../shared/recos/service.js');
      dropReadCaches();
      const started = performance.now();
      const out = await runPicks(plan, {
        baseUrl: stack.url,
        store: new PicksStore(clientId),
        emit: (page) => {
          for (const l of page) {
            bytes += Buffer.byteLength(JSON.stringify(l)) + 1;
            picks += l.recommendations.length;
          }
          lines += page.length;
        },
      });
      const ms = performance.now() - started;
      if (out.members !== MEMBERS || lines !== MEMBERS) throw new Error(`expected ${MEMBERS} lines, got ${lines}`);
      return { ms, bytes, picks };
    };
    const runs = [];
    for (let r = 0; r < RUNS; r++) {
      const m = await run();
      runs.push(m);
      console.log(`run ${r + 1}: ${MEMBERS} members in ${(m.ms / 1000).toFixed(2)} s = ${Math.round(MEMBERS / (m.ms / 1000))} members/s; ${m.picks} picks, ${(m.bytes / 1e6).toFixed(2)} MB NDJSON`);
    }
    const rate = median(runs.map((m) => MEMBERS / (m.ms / 1000)));
    const bytesPerMember = median(runs.map((m) => m.bytes / MEMBERS));
    metering = true;
    await run();
    metering = false;
    const calls = [...tally.values()].reduce((s, t) => s + t.calls, 0);
    const units = [...tally.values()].reduce((s, t) => s + t.units, 0);
    console.log(`median of ${RUNS}: ${Math.round(rate)} members/s, ${Math.round(bytesPerMember)} bytes/member (rows=${ROWS})`);
    console.log(`DynamoDB, one run of ${MEMBERS} members: ${calls} calls = ${(calls / MEMBERS).toFixed(4)} per member; ${units.toFixed(1)} read units = ${(units / MEMBERS).toFixed(3)} per member`);
    for (const [name, t] of [...tally.entries()].sort((a, b) => b[1].calls - a[1].calls)) console.log(`  ${name.padEnd(16)} ${String(t.calls).padStart(6)} calls, ${String(t.items).padStart(7)} items, ${t.units.toFixed(1).padStart(8)} read units`);
    const million = 1_000_000;
    console.log(
      `extrapolated to ${million.toLocaleString('en')} members: ${Math.round(million / rate)} s of one worker (${Math.ceil(million / rate / 840)} invocations of 840 s), ` +
        `${Math.round((calls / MEMBERS) * million).toLocaleString('en')} calls, ${Math.round((units / MEMBERS) * million).toLocaleString('en')} read units, ${((bytesPerMember * million) / 1e9).toFixed(2)} GB NDJSON`,
    );

    // Direct answers through the gateway.
    const token = ((await (await fetch(`${stack.url}/v1/token?username=${clientId}&password=${encodeURIComponent(apiKey)}`)).json()) as { token: string }).token;
    for (const size of [1000, 1500]) {
      const times: number[] = [];
      let status = 0;
      let length = 0;
      for (let r = 0; r < RUNS; r++) {
        const started = performance.now();
        const res = await fetch(`${stack.url}/v1/newsletters/lists/${lists[size]}/recommendations?block_key=${blockKey}&rows=${ROWS}`, { headers: { 'x-service-client-token': token } });
        const body = await res.arrayBuffer();
        times.push(performance.now() - started);
        status = res.status;
        length = body.byteLength;
      }
      console.log(`direct answer, list of ${size} members, rows=${ROWS}: HTTP ${status}, ${(length / 1e6).toFixed(2)} MB, median ${(median(times) / 1000).toFixed(2)} s of ${RUNS}`);
    }
  } finally {
    await stack.stop();
  }
}

await main();
