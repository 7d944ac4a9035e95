/**
 * Signal ablation on the realistic news log (`npm run bench:recos:ablation`):
 * the same generated log and leave-last-out split as bench:recos:realistic,
 * applied through the page-view consumer's batch code (`applyViewBatch`,
 * batches of 1,000) into the memory store, then ranked by the service's own
 * `rankingFor` with each signal switched off in turn. It measures the ranking
 * rules only (no HTTP, no DynamoDB): a table of every signal's contribution in
 * seconds where the real path takes minutes per row. The real path's figure
 * for the default blend is bench:recos:realistic's.
 *
 * Options: --small (the npm test size), --seed, --batch=N and --concurrent=N
 * (the consumer's batches: 1,000 views, one at a time by default), --scenario=week|six-hours
 * (as bench:recos:realistic, the week by default: held-out clicks in the last
 * day, views dated by their log time).
 */
import { generateNewsLog } from './recos-news-log.js';
import { generateNewsWeek } from './recos-news-week.js';
import { K, metrics, offlineBaselines, split } from './recos-replay.js';
import { REALISTIC } from './recos-realistic.js';
import { articleGuid, canonicalUrl } from '../shared/recos/urls.js';
import { MemoryStore } from '../test/helpers/recos-memory-store.js';
import { applyViewBatch } from '../shared/recos/view-batch.js';
import { rankingFor } from '../shared/recos/recommend.js';
import { BLOCK_DEFAULTS, DEFAULT_WEIGHTS } from '../shared/recos/settings.js';
import type { BlockSettings, Weights } from '../shared/recos/types.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const size = args.has('small') ? REALISTIC.small : REALISTIC.full;
const seed = Number(args.get('seed') ?? 11);
const CLIENT = 'ablation';

const scenario = args.get('scenario') ?? REALISTIC.scenarios[0];
if (!(REALISTIC.scenarios as readonly string[]).includes(scenario)) throw new Error(`unknown scenario ${scenario}: ${REALISTIC.scenarios.join(' or ')}`);
const week = scenario === 'week';
const log = (week ? generateNewsWeek : generateNewsLog)({ articles: size.articles, readers: size.readers, seed });
const { train, held } = split(
  log.views.flatMap((v) => {
    const url = canonicalUrl(v.url);
    return url ? [{ ...v, url }] : [];
  }),
  size.evalReaders,
  seed,
  week ? { recentSeconds: REALISTIC.weekRecentSeconds } : {},
);
const lastT = log.views.reduce((m, v) => Math.max(m, v.t), 0);
const store = new MemoryStore();
const now = Math.floor(Date.now() / 1000);
// --batch and --concurrent: the consumer's batch size and how many batches it applies at once (the queue's
// batchSize 1,000 and maxConcurrency 10; a consumer that lags behind the load gets full batches, 10 at once).
const positive = (name: string, fallback: number) => {
  const n = Number(args.get(name) ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1`);
  return n;
};
const batchSize = positive('batch', 1000);
const concurrent = positive('concurrent', 1);
const batches: Array<Parameters<typeof applyViewBatch>[1]> = [];
for (let i = 0; i < train.length; i += batchSize) {
  batches.push(
    train.slice(i, i + batchSize).map((v, j) => ({
      id: String(i + j),
      clientId: CLIENT,
      // The week: the view's log time; else the replay's pace, 500 views a second, ending now.
      t: week ? now - (lastT - v.t) : now - Math.ceil(train.length / 500) + Math.floor((i + j) / 500),
      view: { userId: v.reader, url: v.url, title: v.title, desc: v.desc, category: v.category, themes: v.themes, published: v.published },
    })),
  );
}
for (let i = 0; i < batches.length; i += concurrent) await Promise.all(batches.slice(i, i + concurrent).map((batch) => applyViewBatch(store, batch)));
const catalogue = new Set(log.views.map((v) => articleGuid(v.url))).size;
const without = (signal: keyof Weights): Weights => ({ ...DEFAULT_WEIGHTS, [signal]: 0 });
const variants: Array<[string, Weights]> = [
  ['blend (service default)', DEFAULT_WEIGHTS],
  ['without co-reads', without('covisit')],
  ['without content', without('content')],
  ['without preferences', without('preferences')],
  ['without popularity', without('popularity')],
  ['without freshness', without('freshness')],
  ['popularity only', { covisit: 0, content: 0, preferences: 0, popularity: 1, freshness: 0 }],
];
const baselines = offlineBaselines(train, held);
const score = (lists: string[][]) =>
  metrics(
    lists.map((ranked, i) => ({ ranked, target: held[i].target })),
    catalogue,
  );
const co = score(baselines.covisitation).hitRate;
const line = (name: string, m: ReturnType<typeof metrics>) =>
  `| ${name.padEnd(26)} | ${(m.hitRate * 100).toFixed(1).padStart(5)} % | ${m.ndcg.toFixed(3)} | ${m.mrr.toFixed(3)} | ${(m.coverage * 100).toFixed(1).padStart(5)} % | ${(m.hitRate / co).toFixed(2)}× |`;
console.log(`Ablation on the realistic log (${train.length} training views, ${held.length} held-out readers, top ${K}):`);
console.log('| method                     | hit@10  | nDCG@10 | MRR@10 | coverage | vs co-visitation |');
console.log('|----------------------------|---------|---------|--------|----------|------------------|');
for (const [name, weights] of variants) {
  const settings: BlockSettings = { clientId: CLIENT, rows: K, maxRows: BLOCK_DEFAULTS.maxRows, maxAgeDays: BLOCK_DEFAULTS.maxAgeDays, freshnessHours: BLOCK_DEFAULTS.freshnessHours, envelope: 'smart-section', weights, siteHosts: ['news.example'], categoryDisplay: {}, pins: [], exclude: { guids: [], categories: [] }, variants: [] };
  const lists: string[][] = [];
  for (const h of held) lists.push((await rankingFor(store, settings, { clientId: CLIENT, userId: h.reader, pageUrl: h.page, excluded: [], now })).map((r) => r.article.guid));
  console.log(line(name, score(lists)));
}
console.log(line('most read (offline)', score(baselines.mostRead)));
console.log(line('co-visitation (offline)', score(baselines.covisitation)));
