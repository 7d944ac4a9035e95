/**
 * The ranking rules of recommendations: pure functions over plain values
 * (unit-tested in test/unit/recos-ranking.test.ts, evaluated offline by
 * bench/recos-quality.ts).
 */
import { FRESH_AHEAD_SECONDS, hostAllowed } from './settings.js';
import type { Article, BlockSettings, Covisits, Reason, Weights } from './types.js';

/** Origin of popularity scores (2020-01-01T00:00:00Z, Unix seconds). */
export const POPULARITY_EPOCH = 1_577_836_800;
/** Popularity halves every this many hours without new views. */
export const POPULARITY_HALF_LIFE_HOURS = 48;

/** Half-lives since the popularity epoch. */
export const halfLives = (t: number) => (t - POPULARITY_EPOCH) / (POPULARITY_HALF_LIFE_HOURS * 3600);

/**
 * Stored popularity is split in buckets of 16 half-lives (32 days): bucket
 * `b` holds Σ 2^(halfLives(t_i) − 16·b) over the views in it, at most 2^16
 * per view, which storage can ADD to without reading first and which stays
 * far below 2^53 (the SDK refuses larger numbers). The score is
 * log2 Σ_b 2^(16·b) · mass_b.
 */
export const POPULARITY_BUCKET = 16;

/** The bucket of a view at time `t` and the amount one view adds to it. */
export function viewIncrement(t: number): { bucket: number; amount: number } {
  const x = halfLives(t);
  const bucket = Math.floor(x / POPULARITY_BUCKET);
  return { bucket, amount: 2 ** (x - bucket * POPULARITY_BUCKET) };
}

/** The popularity score from bucket masses; undefined when there are none. */
export function scoreFromBuckets(masses: Record<number, number>): number | undefined {
  let score: number | undefined;
  for (const [bucket, mass] of Object.entries(masses)) {
    if (!(mass > 0)) continue;
    const part = Number(bucket) * POPULARITY_BUCKET + Math.log2(mass);
    score = score === undefined ? part : Math.max(score, part) + Math.log2(1 + 2 ** -Math.abs(score - part));
  }
  return score;
}

/** Bucket masses equivalent to a score (one bucket). */
export function bucketsFromScore(score: number): Record<number, number> {
  const bucket = Math.floor(score / POPULARITY_BUCKET);
  return { [bucket]: 2 ** (score - bucket * POPULARITY_BUCKET) };
}

/**
 * Adds one view at time `t` to a popularity score (log2 of Σ 2^(halfLives(t_i)));
 * `undefined` is the score of an article without views. The order of scores is
 * the order of decayed popularity at any time, so it can be an index sort key.
 */
export function addView(score: number | undefined, t: number): number {
  const x = halfLives(t);
  if (score === undefined) return x;
  const [hi, lo] = score > x ? [score, x] : [x, score];
  return hi + Math.log2(1 + 2 ** (lo - hi));
}

/** Decayed view count of a score at time `now`: views weighted by 2^(−age / half-life). */
export function decayedViews(score: number, now: number): number {
  return 2 ** (score - halfLives(now));
}

export type Signal = keyof Weights;
export const SIGNALS: Signal[] = ['covisit', 'content', 'preferences', 'popularity', 'freshness'];

/**
 * Freshness of an article in [0, 1]: 1 when just published, decaying linearly
 * to 0 at `windowHours` after publication and 0 from then on (also 0 for a
 * publication time in the future by more than an hour, a likely wrong date).
 * Needs no views, so a catalogue article can be recommended before its first reader.
 */
export function freshness(published: number, now: number, windowHours: number): number {
  if (!(windowHours > 0)) return 0;
  const ageHours = (now - published) / 3600;
  if (ageHours < -FRESH_AHEAD_SECONDS / 3600 || ageHours >= windowHours) return 0;
  return 1 - Math.max(0, ageHours) / windowHours;
}

export interface RankInput {
  candidates: Iterable<Article>;
  /** The page being read, when known to the catalogue. */
  current?: Article;
  /** Guid of the page being read (also when not in the catalogue yet). */
  currentGuid?: string;
  /** Co-visit counts of the current page. */
  covisits: Covisits;
  /** Guids the reader already read. */
  read: Set<string>;
  /** Implicit tastes from reads: theme → decayed count. */
  tastes: Record<string, number>;
  /** Explicit theme preferences. */
  preferences: string[];
  /** Guids the request left out (`excluded[]`). */
  excluded: Set<string>;
  /** The block's settings; `pins` and `exclude` (editorial rules) are none when absent. */
  settings: Pick<BlockSettings, 'weights' | 'maxAgeDays' | 'freshnessHours' | 'maxRows' | 'hosts' | 'siteHosts'> & Partial<Pick<BlockSettings, 'pins' | 'exclude'>>;
  /** The articles of the block's pins that the catalogue has (a pin of an unknown or deleted article is skipped). */
  pinned?: Iterable<Article>;
  /**
   * For reasons: candidate guid → the read or current page whose co-reads
   * contributed most to its co-visit count, and those pages' titles.
   */
  covisitFrom?: Map<string, string>;
  titles?: Map<string, string>;
  now: number;
}

export interface Ranked {
  article: Article;
  score: number;
  /** Each signal's contribution to the score (weight × normalised value); all 0 for a pinned article. */
  signals: Record<Signal, number>;
  /** Placed by an editorial pin of the block, not by its score. */
  pinned?: boolean;
  /** Why it is recommended (the smart-section envelope's `reason`), when one signal or a pin says. */
  reason?: Reason;
}

/** The block's exclusions (block setting `exclude`) as sets: guids, lower-cased categories. */
function blockExclusions(settings: RankInput['settings']): { guids: Set<string>; categories: Set<string> } {
  return { guids: new Set(settings.exclude?.guids ?? []), categories: new Set((settings.exclude?.categories ?? []).map((c) => c.toLowerCase())) };
}

const blockExcludes = (x: { guids: Set<string>; categories: Set<string> }, a: Article) => x.guids.has(a.guid) || (x.categories.size > 0 && x.categories.has(a.category.toLowerCase()));

/**
 * May this article be recommended at all? Not the current page, not read, not
 * excluded, not older than `maxAgeDays`, on an allowed host; and an article
 * no reader has viewed yet (known from the catalogue) only while it is fresh
 * (published less than the block's freshness window ago).
 */
export function eligible(article: Article, input: Pick<RankInput, 'currentGuid' | 'read' | 'excluded' | 'settings' | 'now'>): boolean {
  if (article.guid === input.currentGuid) return false;
  if (input.read.has(article.guid) || input.excluded.has(article.guid)) return false;
  if (article.published < input.now - input.settings.maxAgeDays * 86_400) return false;
  if (article.views === 0 && freshness(article.published, input.now, input.settings.freshnessHours) === 0) return false;
  return hostAllowed(input.settings, article.url);
}

/** Content similarity with the current page: Jaccard of themes, plus a bonus for the same category; in [0, 1]. */
export function contentSimilarity(a: Article, current: Article | undefined): number {
  if (!current) return 0;
  const mine = new Set(a.themes);
  const shared = current.themes.filter((t) => mine.has(t)).length;
  const union = mine.size + current.themes.length - shared;
  const jaccard = union === 0 ? 0 : shared / union;
  const sameCategory = a.category !== '' && a.category.toLowerCase() === current.category.toLowerCase() ? 1 : 0;
  return (2 * jaccard + sameCategory) / 3;
}

/**
 * The reader's taste for an article's themes, in [0, 1]: an explicitly
 * preferred theme counts 1, an implicit one its share of the strongest
 * implicit taste times 0.6; the article's best theme decides.
 */
export function preferenceMatch(a: Article, tastes: Record<string, number>, preferences: Set<string>, strongest = strongestTaste(tastes)): number {
  let best = 0;
  for (const theme of a.themes) {
    const value = preferences.has(theme) ? 1 : strongest > 0 ? (0.6 * (tastes[theme] ?? 0)) / strongest : 0;
    if (value > best) best = value;
  }
  return best;
}

/** The largest implicit taste (0 without any). */
export const strongestTaste = (tastes: Record<string, number>) => Math.max(0, ...Object.values(tastes));

const logNorm = (value: number, max: number) => (max <= 0 || value <= 0 ? 0 : Math.log1p(value) / Math.log1p(max));

/**
 * How much of an article's readership is recent, in [0, 1]: its decayed
 * views over its views. A co-read count says nothing of when the co-reads
 * happened; scaled by this, the co-reads of a story everyone read last week
 * weigh less than today's (issue 30: "recency of the co-read"). 1 for an
 * article whose views are all recent, so a log read in one sitting is unchanged.
 */
export function recentShare(a: Article, now: number): number {
  if (!(a.views > 0)) return 1;
  return Math.min(1, decayedViews(a.hot, now) / a.views);
}

/** Content similarity and theme preferences are scaled by the candidate's recentShare, at least this much (docs/benchmarks.md). */
export const TASTE_RECENCY_FLOOR = 0.25;

/**
 * Popularity's weight scales with how concentrated attention is now (the top ten candidates' share of decayed views,
 * over REF, clamped to [1, CAP]): where a few stories take most reads, they predict the next click. Below MIN
 * candidates the share says nothing and the block's weight stands (sweep: docs/benchmarks.md).
 */
export const POPULARITY_CONCENTRATION_REF = 0.1;
export const POPULARITY_CONCENTRATION_CAP = 3.3;
export const POPULARITY_CONCENTRATION_MIN = 50;

export function popularityFactor(popularities: Iterable<number>): number {
  const values = [...popularities].sort((x, y) => y - x);
  const total = values.reduce((s, v) => s + v, 0);
  if (values.length < POPULARITY_CONCENTRATION_MIN || !(total > 0)) return 1;
  const top = values.slice(0, 10).reduce((s, v) => s + v, 0);
  return Math.min(POPULARITY_CONCENTRATION_CAP, Math.max(1, top / total / POPULARITY_CONCENTRATION_REF));
}

/**
 * Ranks candidates by the block's weighted blend of co-visits, content similarity and theme preferences (scaled by
 * recentShare), decayed popularity (scaled by popularityFactor) and freshness; popularity alone orders the rest, ties
 * by guid so pages are stable. Excluded articles never rank; active pins take their positions (docs/api.md).
 */
export function rank(input: RankInput): Ranked[] {
  const { weights } = input.settings;
  const preferences = new Set(input.preferences);
  const exclusions = blockExclusions(input.settings);
  const pins = activePins(input, exclusions);
  const seen = new Set<string>(pins.map((p) => p.article.guid));
  const pool: Article[] = [];
  for (const a of input.candidates) {
    if (seen.has(a.guid) || !eligible(a, input) || blockExcludes(exclusions, a)) continue;
    seen.add(a.guid);
    pool.push(a);
  }
  const popularity = new Map(pool.map((a) => [a.guid, decayedViews(a.hot, input.now)]));
  const maxPopularity = Math.max(0, ...popularity.values());
  const popularityWeight = weights.popularity * popularityFactor(popularity.values());
  const covisits = new Map(pool.map((a) => [a.guid, (input.covisits[a.guid] ?? 0) * recentShare(a, input.now)]));
  const maxCovisit = Math.max(0, ...covisits.values());
  const strongest = strongestTaste(input.tastes);
  const ranked = pool.map((article) => {
    // What the reader likes (content like the page's, their themes) among what is being read now: like co-reads, scaled by the
    // candidate's recent share of readers (1 for an article all of whose views are recent, or that has none yet), but never
    // below TASTE_RECENCY_FLOOR: an evergreen article of a theme the reader chose keeps a quarter of its match.
    const recent = Math.max(TASTE_RECENCY_FLOOR, recentShare(article, input.now));
    const signals: Record<Signal, number> = {
      covisit: weights.covisit * logNorm(covisits.get(article.guid)!, maxCovisit),
      content: recent * weights.content * contentSimilarity(article, input.current),
      preferences: recent * weights.preferences * preferenceMatch(article, input.tastes, preferences, strongest),
      popularity: popularityWeight * logNorm(popularity.get(article.guid)!, maxPopularity),
      // An article whose publication time nobody gave is not fresh: its `published` is only its first view (e.g. the back catalogue at install).
      freshness: article.dated === false ? 0 : weights.freshness * freshness(article.published, input.now, input.settings.freshnessHours),
    };
    return { article, signals, score: signals.covisit + signals.content + signals.preferences + signals.popularity + signals.freshness };
  });
  ranked.sort((x, y) => y.score - x.score || y.article.hot - x.article.hot || (x.article.guid < y.article.guid ? -1 : 1));
  const out: Ranked[] = ranked.slice(0, input.settings.maxRows);
  // Pins in ascending position: each lands at its position (or last, when the ranking is shorter).
  for (const { article, position } of pins) {
    out.splice(Math.min(position - 1, out.length), 0, { article, score: 0, signals: { covisit: 0, content: 0, preferences: 0, popularity: 0, freshness: 0 }, pinned: true });
  }
  const page = out.slice(0, input.settings.maxRows);
  for (const r of page) r.reason = reasonOf(r, input, preferences, strongest);
  return page;
}

/**
 * The block's pins that show in this request, by position: not expired
 * (`until` in the future), of an article the catalogue has (`pinned`), not
 * the page being read, not excluded by the request nor by the block, on an
 * allowed host. An article pinned twice shows at its first position.
 */
function activePins(input: RankInput, exclusions: ReturnType<typeof blockExclusions>): Array<{ article: Article; position: number }> {
  const pins = input.settings.pins ?? [];
  if (pins.length === 0) return [];
  const articles = new Map([...(input.pinned ?? [])].map((a) => [a.guid, a]));
  const out: Array<{ article: Article; position: number }> = [];
  for (const pin of [...pins].sort((x, y) => x.position - y.position)) {
    const article = articles.get(pin.guid);
    if (!article || (pin.until !== undefined && pin.until <= input.now) || out.some((p) => p.article.guid === pin.guid)) continue;
    if (article.guid === input.currentGuid || input.excluded.has(article.guid) || blockExcludes(exclusions, article) || !hostAllowed(input.settings, article.url)) continue;
    out.push({ article, position: pin.position });
  }
  return out;
}

/** The signals a reason can name, and what each says. */
const REASON_SIGNALS = ['covisit', 'preferences', 'popularity', 'freshness'] as const;

/**
 * Why an item is recommended: `pinned` for a pin; else its dominant signal
 * among co-visits (`covisit`, from the read or current page whose co-reads
 * contributed most, when its title is known), theme preferences
 * (`preferences`, the article's best-matching theme), popularity (`popular`)
 * and freshness (`fresh`); content similarity alone names none. Undefined
 * when no such signal contributed.
 */
export function reasonOf(r: Ranked, input: Pick<RankInput, 'covisitFrom' | 'titles' | 'tastes'>, preferences: Set<string>, strongest = strongestTaste(input.tastes)): Reason | undefined {
  if (r.pinned) return { type: 'pinned' };
  const order = REASON_SIGNALS.filter((s) => r.signals[s] > 0).sort((x, y) => r.signals[y] - r.signals[x]);
  for (const signal of order) {
    if (signal === 'covisit') {
      const from = input.covisitFrom?.get(r.article.guid);
      const title = from === undefined ? undefined : input.titles?.get(from);
      if (from !== undefined && title) return { type: 'covisit', from: { guid: from, title } };
    } else if (signal === 'preferences') {
      const theme = bestTheme(r.article, input.tastes, preferences, strongest);
      if (theme) return { type: 'preferences', theme };
    } else {
      return { type: signal === 'popularity' ? 'popular' : 'fresh' };
    }
  }
  return undefined;
}

/** The article's theme that matches the reader best (`preferenceMatch`'s choice), undefined when none does. */
export function bestTheme(a: Article, tastes: Record<string, number>, preferences: Set<string>, strongest = strongestTaste(tastes)): string | undefined {
  let best = 0;
  let theme: string | undefined;
  for (const t of a.themes) {
    const value = preferences.has(t) ? 1 : strongest > 0 ? (0.6 * (tastes[t] ?? 0)) / strongest : 0;
    if (value > best) [best, theme] = [value, t];
  }
  return theme;
}

/**
 * Names what served a page of results: the signals that contributed to at
 * least one item, joined by "+", e.g. `covisit+content+popularity`;
 * `popularity` alone is the cold-start fallback; `none` for an empty page.
 */
export function algoName(items: Ranked[]): string {
  const used = SIGNALS.filter((s) => items.some((r) => r.signals[s] > 0));
  return used.length > 0 ? used.join('+') : 'none';
}

/** Fisher–Yates shuffle of a copy (`shuffle=true` reorders the page, not the ranking). */
export function shuffled<T>(items: T[], random: () => number = Math.random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
