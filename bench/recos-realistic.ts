/**
 * The realistic quality benchmark (`npm run bench:recos:realistic`): a
 * generated log with the properties of real news click logs replayed through
 * the real path (HTTP into the local gateway, the tracking queue and its
 * consumer, DynamoDB Local) and measured leave-last-out
 * (bench/recos-replay.ts) against most-read and plain item co-visitation
 * computed offline on the same split.
 *
 * Two scenarios (docs/benchmarks.md#recommendation-quality):
 * - `week` (the default): a week of news (bench/recos-news-week.ts), views
 *   dated by their log time (bench/sim-clock.ts), held-out clicks in the
 *   log's last 24 h. It is the yardstick because most read scores low there,
 *   as on the real click log of issue 30; on the 6-hour log most read scores
 *   far higher, and a blend tuned on it would lean on popularity.
 * - `six-hours`: the first log (bench/recos-news-log.ts), kept as a second
 *   check (the blend must not lose it; see the figures in the docs).
 *
 * Exits 1 when the service's hit rate@10 is below 1.3× the co-visitation
 * baseline's, when the replay ran below 500 views/s, when a read was lost,
 * or when the generated log leaves its documented ranges. `--gate=regression`
 * (npm test, test/integration/recos-realistic.test.ts: `--small
 * --scenario=six-hours`) judges every read kept, ≥ 1.2× most read and ≥ 0.95×
 * co-visitation instead of 1.3×.
 *
 * Options: --scenario=week|six-hours, --articles, --readers, --eval-readers,
 * --concurrency, --seed, --small, --weights=covisit:1,content:0.35,... (the
 * block's weights: the ablation table), --min-rate (views/s, default 500),
 * --gate=regression, --order=reader (six-hours: each reader's views together),
 * --meter (the consumer's DynamoDB calls per view, by command),
 * --inline-consumer (the queue's consumer on the load's thread instead of a
 * worker thread of its own), --warm-up=<seconds> (of DynamoDB Local before
 * the timed replay; default 15, 0 for none: npm test, which does not judge
 * the rate).
 *
 * The rate judged is the replay's: views a second taken by the service (every
 * one answered 200), as a site sends them; the queue's consumer runs in a
 * worker thread of its own, as Lambda runs it in a function of its own, and
 * the readers ask once it has applied every view (and a minute later). The
 * rate at which every view was applied (send + drain) is printed beside it:
 * on this 2-core machine the load, the gateway, the consumer and DynamoDB
 * Local share the CPU (docs/benchmarks.md#recommendation-quality).
 */
import { generateNewsLog, type NewsLogOptions } from './recos-news-log.js';
import { generateNewsWeek } from './recos-news-week.js';
import { formatResult, replayAndEvaluate, type ReplayResult } from './recos-replay.js';

export const REALISTIC = {
  /** The default scenario (the header says why); the other is `six-hours`. */
  scenarios: ['week', 'six-hours'] as const,
  full: { articles: 20_000, readers: 40_000, evalReaders: 1500 },
  small: { articles: 3_000, readers: 6_000, evalReaders: 1000 },
  /** The week scenario: held-out readers are those whose last view is in the log's last day. */
  weekRecentSeconds: 86_400,
  /** The service must beat plain co-visitation by this factor on hit rate@10. */
  minLift: 1.3,
  minViewsPerSecond: 500,
  /** `--gate=regression` (npm test): at least these factors over most-read and co-visitation, and every read kept. */
  regression: { overMostRead: 1.2, overCovisitation: 0.95 },
};

/** Generates the log, replays it and checks it: the problems found (empty when the benchmark passes). */
export async function runRealistic(o: { articles: number; readers: number; evalReaders: number; seed?: number; concurrency?: number; block?: Record<string, unknown>; minRate?: number; order?: string; gate?: string; generator?: Partial<NewsLogOptions>; scenario?: string; meter?: boolean; consumerThread?: boolean; warmUpSeconds?: number; log?: (line: string) => void }): Promise<{ result: ReplayResult; problems: string[] }> {
  const log = o.log ?? ((line: string) => console.log(line));
  const scenario = o.scenario ?? REALISTIC.scenarios[0];
  if (!(REALISTIC.scenarios as readonly string[]).includes(scenario)) throw new Error(`unknown scenario ${scenario}: ${REALISTIC.scenarios.join(' or ')}`);
  const week = scenario === 'week';
  const options = { articles: o.articles, readers: o.readers, seed: o.seed ?? 11, ...o.generator };
  const news = week ? generateNewsWeek(options) : generateNewsLog(options);
  // The week is replayed on its own time: this process's clock (the handlers', the queue's) follows the views sent.
  const simClock = week ? await import('./sim-clock.js') : undefined;
  const s = news.stats;
  log(
    `Log (${scenario}): ${s.views} views of ${s.articlesViewed} articles by ${o.readers} readers; top 1 % of articles take ${(s.topPercentShare * 100).toFixed(1)} % of views; ` +
      `${(s.readOnceOrTwice * 100).toFixed(0)} % of articles read once or twice; ${(s.readersOneToThree * 100).toFixed(0)} % of readers with 1–3 views; ` +
      `${s.withoutPublished} articles without published_time, ${s.titleOnly} with only a title`,
  );
  const problems: string[] = [];
  if (s.topPercentShare < 0.3 || s.topPercentShare > 0.5) problems.push(`the top 1 % take ${(s.topPercentShare * 100).toFixed(1)} % of views (documented range 30–50 %)`);
  // --order=reader: each reader's views one after the other (as a log without times is replayed), not interleaved in time.
  const views = o.order === 'reader' ? [...news.views].sort((a, b) => (a.reader < b.reader ? -1 : a.reader > b.reader ? 1 : a.t - b.t)) : news.views;
  const result = await replayAndEvaluate(views, {
    evalReaders: o.evalReaders,
    concurrency: o.concurrency ?? 32,
    seed: o.seed ?? 11,
    block: o.block,
    meter: o.meter,
    consumerThread: o.consumerThread,
    warmUpSeconds: o.warmUpSeconds,
    log,
    ...(simClock ? { recentSeconds: REALISTIC.weekRecentSeconds, logTime: (t: number) => simClock.setSimNow(new Date(t * 1000).toISOString()), simClock: simClock.simClockBuffer() } : {}),
  });
  log(formatResult(result));
  // A view answered anything but 200 was not counted: the replay is not the log (a 500 here once came from the local context's deadline on the simulated clock).
  const failed = [...result.statuses].filter(([status]) => status !== 200);
  if (failed.length > 0) problems.push(`page views answered ${failed.map(([status, n]) => `${n} × ${status}`).join(', ')} (all must be 200)`);
  if (result.readsKept < 1) problems.push(`the consumer kept ${(result.readsKept * 100).toFixed(1)} % of the held-out readers' training reads (all must be kept)`);
  const lift = result.service.hitRate / Math.max(1e-9, result.covisitation.hitRate);
  if (o.gate === 'regression') {
    // The guard in npm test (test/integration/recos-realistic.test.ts): what the lost-reads regression broke, with room for the small log's noise.
    const overMostRead = result.service.hitRate / Math.max(1e-9, result.mostRead.hitRate);
    if (overMostRead < REALISTIC.regression.overMostRead) problems.push(`hit rate@10 is ${overMostRead.toFixed(2)}× most-read: below ${REALISTIC.regression.overMostRead}×`);
    if (lift < REALISTIC.regression.overCovisitation) problems.push(`hit rate@10 is ${lift.toFixed(2)}× plain co-visitation: below ${REALISTIC.regression.overCovisitation}×`);
  } else if (lift < REALISTIC.minLift) problems.push(`hit rate@10 ${(result.service.hitRate * 100).toFixed(1)} % is ${lift.toFixed(2)}× plain co-visitation (${(result.covisitation.hitRate * 100).toFixed(1)} %): below ${REALISTIC.minLift}×`);
  const minRate = o.minRate ?? REALISTIC.minViewsPerSecond;
  if (result.viewsPerSecond < minRate) problems.push(`replayed at ${result.viewsPerSecond.toFixed(0)} views/s, below ${minRate}`);
  return { result, problems };
}

function parseWeights(text: string | undefined): Record<string, number> | undefined {
  if (!text) return undefined;
  return Object.fromEntries(text.split(',').map((pair) => pair.split(':')).map(([k, n]) => [k, Number(n)]));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
  const size = args.has('small') ? REALISTIC.small : REALISTIC.full;
  const weights = parseWeights(args.get('weights'));
  const { problems } = await runRealistic({
    articles: Number(args.get('articles') ?? size.articles),
    readers: Number(args.get('readers') ?? size.readers),
    evalReaders: Number(args.get('eval-readers') ?? size.evalReaders),
    seed: Number(args.get('seed') ?? 11),
    concurrency: Number(args.get('concurrency') ?? 32),
    minRate: Number(args.get('min-rate') ?? REALISTIC.minViewsPerSecond),
    block: weights ? { weights } : undefined,
    order: args.get('order'),
    gate: args.get('gate'),
    scenario: args.get('scenario'),
    generator: parseWeights(args.get('log')),
    meter: args.has('meter'),
    consumerThread: !args.has('inline-consumer'),
    warmUpSeconds: args.has('warm-up') ? Number(args.get('warm-up')) : undefined,
  });
  for (const p of problems) console.error(`FAIL: ${p}`);
  process.exit(problems.length > 0 ? 1 : 0);
}
