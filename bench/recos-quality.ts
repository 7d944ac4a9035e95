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
 */
import { eligible, type RankInput } from '../shared/recos/ranking.js';
import { rankingFor } from '../shared/recos/recommend.js';
import { BLOCK_DEFAULTS, DEFAULT_WEIGHTS } from '../shared/recos/settings.js';
import { MemoryStore } from '../shared/recos/store.js';
import { trackPageView } from '../shared/recos/tracking.js';
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

async function main() {
  const started = Date.now();
  const log = generateClickLog(options);
  const split = log.end - options.testDays * DAY;
  const store = new MemoryStore();
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

  const lastInSession = new Map<number, GenArticle>();
  const hits = Object.fromEntries(Object.keys(methods).map((m) => [m, { all: 0, fromPage: 0 }]));
  let evaluated = 0;
  let fromPage = 0;
  let trained = 0;
  for (const v of log.views) {
    const target = log.articles[v.article];
    const previous = lastInSession.get(v.session);
    if (v.t >= split) {
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
        if (top.includes(targetGuid)) {
          hits[name].all++;
          if (previous) hits[name].fromPage++;
        }
      }
    } else {
      trained++;
    }
    await trackPageView(store, client, view(v.reader, target), v.t);
    lastInSession.set(v.session, target);
  }

  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(1)}%`.padStart(7);
  console.log(`Offline evaluation of recommendations: hit rate@${K}`);
  console.log(
    `log: ${log.articles.length} articles, ${log.views.length} page views by ${log.readers} readers over ${options.days} days (seed ${options.seed}); ` +
      `trained on ${trained} views, predicted ${evaluated} views of the last ${options.testDays} days (${fromPage} coming from an article page)`,
  );
  console.log(`${'method'.padEnd(28)} ${'all views'.padStart(10)} ${'from a page'.padStart(12)}`);
  for (const name of Object.keys(methods)) {
    console.log(`${name.padEnd(28)} ${pct(hits[name].all, evaluated).padStart(10)} ${pct(hits[name].fromPage, fromPage).padStart(12)}`);
  }
  const blend = hits['blend (service default)'].all;
  const popular = hits['most popular (baseline)'].all;
  console.log(`blend vs most popular: ×${(blend / Math.max(1, popular)).toFixed(2)}   (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (blend <= popular) {
    console.error('FAIL: the blend does not beat the most-popular baseline');
    process.exitCode = 1;
  }
}

await main();
