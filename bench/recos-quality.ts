/**
 * Offline evaluation of the recommendation ranking (`npm run bench:recos:quality`).
 *
 * A generated click log with known structure (bench/recos-data.ts) is replayed
 * through the service's own tracking and ranking code (the memory store has
 * the DynamoDB store's semantics). The first days train; on the last two days
 * every page view is predicted before it is recorded: a hit when the article
 * the reader opens next is in the top 10 offered on the page they come from.
 * Hit rate@10 of the blend is printed next to a most-popular baseline (same
 * candidates and exclusions, popularity weight only), a random baseline and
 * single-signal ablations, in one run. Exits 1 when the blend does not beat
 * most-popular.
 *
 * Second scenario, same run and same log: new articles are published during
 * the evaluation (the generated stories are published all along the log, the
 * last two days included). A second store replays the log with the catalogue
 * feed: each article is upserted at its publication time plus a poll delay
 * (`--poll-delay`, seconds, default 600), before any view at or after that
 * time, as a feed poll does (`upsertArticle` without reviving, then
 * `addFresh`: the client's fresh list, where fresh candidates come from);
 * the first scenario's store is the one without the feed (an article is
 * known from its first view, and the fresh list stays empty). Hit
 * rate@10 of the service-default blend and of most-popular in both stores, on
 * all predicted views, on the views of articles published less than
 * `--young-hours` (default 24) before, and on first views of an article
 * (which a store without the feed cannot predict: the article is unknown).
 */
import { eligible, type RankInput } from '../shared/recos/ranking.js';
import { rankingFor } from '../shared/recos/recommend.js';
import { BLOCK_DEFAULTS, DEFAULT_WEIGHTS, MAX_FRESHNESS_HOURS } from '../shared/recos/settings.js';
import { READ_CACHE_SECONDS } from '../shared/recos/read-cache.js';
import { jobs } from '../shared/jobs.js';
import { MemoryStore } from '../test/helpers/recos-memory-store.js';
import { applyViewBatch, type QueuedView } from '../shared/recos/view-batch.js';
import type { BlockSettings, Weights } from '../shared/recos/types.js';
import { articleGuid } from '../shared/recos/urls.js';
import { generateClickLog, prng, type GenArticle } from './recos-data.js';

const DAY = 86_400;
const K = 10;
const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const options = {
  articles: Number(args.get('articles') ?? 3000),
  views: Number(args.get('views') ?? 60_000),
  readers: Number(args.get('readers') ?? 4000),
  days: Number(args.get('days') ?? 30),
  testDays: Number(args.get('test-days') ?? 2),
  seed: Number(args.get('seed') ?? 42),
  pollDelay: Number(args.get('poll-delay') ?? 600),
  youngHours: Number(args.get('young-hours') ?? 24),
  // The consumer's batching window plus 5 s for the batch's run.
  batchDelay: Number(args.get('batch-delay') ?? jobs.trackingViews.trigger.trackingQueue.maxBatchingWindowSeconds + 5),
};

const settingsWith = (weights: Weights): BlockSettings => ({
  clientId: 'bench',
  rows: K,
  maxRows: BLOCK_DEFAULTS.maxRows,
  maxAgeDays: BLOCK_DEFAULTS.maxAgeDays,
  freshnessHours: BLOCK_DEFAULTS.freshnessHours,
  envelope: 'smart-section',
  weights,
  siteHosts: ['gazette.example'],
  categoryDisplay: {},
  pins: [],
  exclude: { guids: [], categories: [] },
  variants: [],
});

const methods: Record<string, Weights | 'random'> = {
  'blend (service default)': DEFAULT_WEIGHTS,
  'most popular (baseline)': { covisit: 0, content: 0, preferences: 0, popularity: 1, freshness: 0 },
  'random (baseline)': 'random',
  'blend without freshness': { ...DEFAULT_WEIGHTS, freshness: 0 },
  'co-visits + popularity': { ...DEFAULT_WEIGHTS, content: 0, preferences: 0 },
  'content + popularity': { ...DEFAULT_WEIGHTS, covisit: 0, preferences: 0 },
  'preferences + popularity': { ...DEFAULT_WEIGHTS, covisit: 0, content: 0 },
};

/** The second scenario's methods (a subset of `methods`). */
const feedMethods = ['blend (service default)', 'most popular (baseline)'] as const;

async function main() {
  const started = Date.now();
  const log = generateClickLog(options);
  const split = log.end - options.testDays * DAY;
  // The service's popular list may be a container's copy up to READ_CACHE_SECONDS old: so is the evaluation's.
  const store = new MemoryStore({ popularRefreshSeconds: READ_CACHE_SECONDS });
  const client = 'bench';
  const random = prng(options.seed + 1);
  const urlOf = (a: GenArticle) => a.url;
  const view = (reader: number, a: GenArticle) => ({
    userId: `reader-${reader}`,
    url: urlOf(a),
    title: a.title,
    category: a.category,
    themes: a.themes,
    published: a.published,
  });

  // Scenario 2: the same log with the catalogue feed. Polls in time order (articles are sorted by publication).
  const catalogue = new MemoryStore({ popularRefreshSeconds: READ_CACHE_SECONDS });
  const polls = log.articles.map((a) => ({ article: a, t: a.published + options.pollDelay })).filter((p) => p.t <= log.end);
  let nextPoll = 0;
  const feedHits = Object.fromEntries(
    feedMethods.flatMap((m) => ['with', 'without'].map((store) => [`${m}|${store}`, { all: 0, young: 0, first: 0 }])),
  );
  const seenArticles = new Set<number>();
  let youngViews = 0;
  let firstViews = 0;
  const publishedInTest = log.articles.filter((a) => a.published >= split && a.published <= log.end).length;

  const lastInSession = new Map<number, GenArticle>();
  const hits = Object.fromEntries(Object.keys(methods).map((m) => [m, { all: 0, fromPage: 0 }]));
  let evaluated = 0;
  let fromPage = 0;
  let trained = 0;
  // Views reach the stores as the tracking queue's consumer applies them: in batches, `batchDelay` seconds after the batch's first view.
  let pending: Array<QueuedView & { id: string }> = [];
  let batches = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    batches++;
    await applyViewBatch(store, batch);
    await applyViewBatch(catalogue, batch);
  };
  for (const v of log.views) {
    if (pending.length > 0 && v.t >= pending[0].t + options.batchDelay) await flush();
    const target = log.articles[v.article];
    const previous = lastInSession.get(v.session);
    while (nextPoll < polls.length && polls[nextPoll].t <= v.t) {
      // What a feed poll does (catalogue.ts upsertArticles, bound to DynamoDB): upsert without reviving, then the fresh list.
      const { article: a, t } = polls[nextPoll++];
      const result = await catalogue.upsertArticle(client, { url: urlOf(a), title: a.title, category: a.category, themes: a.themes, published: a.published }, t, { revive: false });
      if (result && result.article.published >= t - MAX_FRESHNESS_HOURS * 3600) await catalogue.addFresh(client, [{ guid: result.article.guid, published: result.article.published }], t);
    }
    const firstView = !seenArticles.has(v.article);
    seenArticles.add(v.article);
    if (v.t >= split) {
      const young = v.t - target.published < options.youngHours * 3600;
      if (young) youngViews++;
      if (firstView) firstViews++;
      const count = (key: string, top: string[]) => {
        if (!top.includes(articleGuid(target.url))) return;
        feedHits[key].all++;
        if (young) feedHits[key].young++;
        if (firstView) feedHits[key].first++;
      };
      evaluated++;
      if (previous) fromPage++;
      const targetGuid = articleGuid(target.url);
      const pageUrl = previous ? urlOf(previous) : undefined;
      for (const [name, weights] of Object.entries(methods)) {
        let top: string[];
        if (weights === 'random') {
          const ctx = await store.context(client, { userId: `reader-${v.reader}` });
          const filter: Pick<RankInput, 'currentGuid' | 'read' | 'excluded' | 'settings' | 'now'> = {
            currentGuid: pageUrl ? articleGuid(pageUrl) : undefined,
            read: new Set((ctx.reader?.reads ?? []).map((r) => r.g)),
            excluded: new Set(),
            settings: settingsWith(DEFAULT_WEIGHTS),
            now: v.t,
          };
          const pool = [...store.articleMap.get(client)!.values()].filter((a) => eligible(a, filter));
          top = [];
          for (let i = 0; i < K && pool.length > 0; i++) top.push(pool.splice(Math.floor(random() * pool.length), 1)[0].guid);
        } else {
          const ranking = await rankingFor(store, settingsWith(weights), { clientId: client, userId: `reader-${v.reader}`, pageUrl, excluded: [], now: v.t });
          top = ranking.slice(0, K).map((r) => r.article.guid);
        }
        // Scenario 2 without the feed: this store, these rankings.
        if ((feedMethods as readonly string[]).includes(name)) count(`${name}|without`, top);
        if (top.includes(targetGuid)) {
          hits[name].all++;
          if (previous) hits[name].fromPage++;
        }
      }
      for (const name of feedMethods) {
        const ranking = await rankingFor(catalogue, settingsWith(methods[name] as Weights), { clientId: client, userId: `reader-${v.reader}`, pageUrl, excluded: [], now: v.t });
        count(`${name}|with`, ranking.slice(0, K).map((r) => r.article.guid));
      }
    } else {
      trained++;
    }
    pending.push({ id: String(v.t), clientId: client, view: view(v.reader, target), t: v.t });
    lastInSession.set(v.session, target);
  }
  await flush();

  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(1)}%`.padStart(7);
  console.log(`Offline evaluation of recommendations: hit rate@${K}`);
  console.log(
    `log: ${log.articles.length} articles, ${log.views.length} page views by ${log.readers} readers over ${options.days} days (seed ${options.seed}); ` +
      `trained on ${trained} views, predicted ${evaluated} views of the last ${options.testDays} days (${fromPage} coming from an article page)`,
  );
  console.log(`views applied as the tracking queue's consumer does: in ${batches} batches, each ${options.batchDelay} s after its first view (--batch-delay)`);
  console.log(`${'method'.padEnd(28)} ${'all views'.padStart(10)} ${'from a page'.padStart(12)}`);
  for (const name of Object.keys(methods)) {
    console.log(`${name.padEnd(28)} ${pct(hits[name].all, evaluated).padStart(10)} ${pct(hits[name].fromPage, fromPage).padStart(12)}`);
  }
  const blend = hits['blend (service default)'].all;
  const popular = hits['most popular (baseline)'].all;
  console.log(`blend vs most popular: ×${(blend / Math.max(1, popular)).toFixed(2)}`);

  const young = `first ${options.youngHours} h`;
  console.log('');
  console.log(
    `New articles during the evaluation: ${publishedInTest} articles published in the last ${options.testDays} days; ` +
      `with the catalogue feed each article is upserted ${options.pollDelay / 60} min after publication (a feed poll), without it an article is known from its first view`,
  );
  console.log(`predicted ${evaluated} views: ${youngViews} of articles published less than ${options.youngHours} h before, ${firstViews} first views of an article`);
  console.log(`${'method'.padEnd(46)} ${'all views'.padStart(10)} ${young.padStart(12)} ${'first view'.padStart(11)}`);
  for (const name of feedMethods) {
    for (const [store, label] of [['with', 'with the catalogue feed'], ['without', 'without (known from first view)']]) {
      const h = feedHits[`${name}|${store}`];
      console.log(`${`${name.replace(/ \(.*\)$/, '')}, ${label}`.padEnd(46)} ${pct(h.all, evaluated).padStart(10)} ${pct(h.young, youngViews).padStart(12)} ${pct(h.first, firstViews).padStart(11)}`);
    }
  }
  const ratio = (key: 'all' | 'young') => `×${(feedHits['blend (service default)|with'][key] / Math.max(1, feedHits['blend (service default)|without'][key])).toFixed(2)}`;
  console.log(`blend with vs without the catalogue feed: all views ${ratio('all')}, ${young} ${ratio('young')}   (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (blend <= popular) {
    console.error('FAIL: the blend does not beat the most-popular baseline');
    process.exitCode = 1;
  }
}

await main();
