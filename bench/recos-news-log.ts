/**
 * A generated page-view log with the properties of real news click logs
 * (the realistic quality benchmark's `six-hours` scenario,
 * `npm run bench:recos:realistic -- --scenario=six-hours`; the numbers and why they were chosen are in docs/benchmarks.md):
 *
 * - heavy-tailed article popularity: Zipf-distributed appeal, so the top 1 %
 *   of articles take 30–50 % of the views (the generator checks and reports
 *   it), and a long tail of articles read once or twice;
 * - heavy-tailed reader activity: most readers have 1–3 views, a few have
 *   up to 30 (histories capped at 30, as in the public news click logs);
 * - a back catalogue: part of the articles carry no `published_time` (the
 *   service first sees them at install), and part of the most read ones
 *   carry only a title (no description, category or themes);
 * - categories and subcategories (sent as `category` and `themes`), and
 *   stories: a few articles on one event, read one after the other;
 * - readers' next clicks mix what everyone reads, the same subcategory,
 *   the same story and their own favourite categories; readers' visits
 *   interleave in time, as traffic does.
 *
 * Deterministic (seeded). Rows are in time order; `t` is only used for order
 * (the service dates views itself).
 */
import { prng } from './recos-data.js';
import type { LogView } from './recos-replay.js';

/** A view of the log: what the replay sends (`published` absent for the back catalogue). */
export type NewsView = LogView;

export interface NewsLogOptions {
  articles: number;
  readers: number;
  seed?: number;
  /** Zipf exponent of article appeal. */
  zipf?: number;
  /** Pareto exponent of the number of views per reader (P(L ≥ k) = k^-α). */
  activity?: number;
  /** Longest history. */
  maxHistory?: number;
  /** Share of articles without a publication time (back catalogue). */
  backCatalogue?: number;
  /** Share of the top 1 % articles whose views carry only a title. */
  titleOnlyTop?: number;
  /** Next-click mixture: same story, same subcategory, favourite category; the rest follows the crowd. */
  story?: number;
  subcategory?: number;
  taste?: number;
  /** A dated article's appeal halves every this many hours of age. */
  halfLifeHours?: number;
}

export const NEWS_DEFAULTS = {
  zipf: 0.95,
  activity: 1.6,
  maxHistory: 30,
  backCatalogue: 0.5,
  titleOnlyTop: 0.5,
  story: 0.2,
  subcategory: 0.25,
  taste: 0.2,
  halfLifeHours: 36,
} satisfies Partial<NewsLogOptions>;

export interface NewsLog {
  views: NewsView[];
  /** Log statistics (printed by the benchmark, checked against the documented ranges). */
  stats: { views: number; articlesViewed: number; topPercentShare: number; readOnceOrTwice: number; readersOneToThree: number; titleOnly: number; withoutPublished: number };
}

interface GenNews {
  url: string;
  title: string;
  category: number;
  subcategory: number;
  story: number;
  published?: number;
  titleOnly: boolean;
}

export const CATEGORIES = ['news', 'sports', 'finance', 'lifestyle', 'entertainment', 'health', 'travel', 'autos', 'foodanddrink', 'weather', 'video', 'music', 'movies', 'tv', 'kids', 'northamerica'];

/** A sampler over weights (cumulative sums, binary search). */
export function sampler(weights: ArrayLike<number>, random: () => number): () => number {
  const cumulative = new Float64Array(weights.length);
  let sum = 0;
  for (let i = 0; i < weights.length; i++) cumulative[i] = sum += weights[i];
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export function generateNewsLog(o: NewsLogOptions): NewsLog {
  const p = { ...NEWS_DEFAULTS, ...o };
  const random = prng(p.seed ?? 11);
  const now = Math.floor(Date.now() / 1000);
  const span = 6 * 3600;
  // Categories of unequal size; subcategories per category 4–20; stories of 1–6 articles within a subcategory.
  const categoryWeight = CATEGORIES.map((_, i) => 1 / (i + 1) ** 0.8);
  const pickCategory = sampler(categoryWeight, random);
  const subcategories: number[][] = CATEGORIES.map(() => []);
  let nextSub = 0;
  for (let c = 0; c < CATEGORIES.length; c++) {
    const n = 4 + Math.floor(random() * 17);
    for (let i = 0; i < n; i++) subcategories[c].push(nextSub++);
  }
  const articles: GenNews[] = [];
  let story = 0;
  while (articles.length < p.articles) {
    const category = pickCategory();
    const subs = subcategories[category];
    const subcategory = subs[Math.floor(random() * random() * subs.length)];
    const size = 1 + Math.floor(random() * random() * 6);
    const published = now - Math.floor(random() * 10 * 86_400);
    for (let i = 0; i < size && articles.length < p.articles; i++) {
      const index = articles.length;
      articles.push({
        url: `https://news.example/${CATEGORIES[category]}/s${subcategory}/a${index}`,
        title: `Story ${story}, part ${i + 1}: article ${index}`,
        category,
        subcategory,
        story,
        published: published + i * 1800,
        titleOnly: false,
      });
    }
    story++;
  }
  // Appeal: Zipf over a random order of the articles.
  const order = articles.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const appeal = new Array<number>(articles.length);
  order.forEach((article, rank) => (appeal[article] = 1 / (rank + 1) ** p.zipf));
  const top = Math.max(1, Math.floor(articles.length / 100));
  for (let rank = 0; rank < articles.length; rank++) {
    const a = articles[order[rank]];
    a.titleOnly = rank < top ? random() < p.titleOnlyTop : random() < 0.05;
    if (random() < p.backCatalogue) a.published = undefined;
  }
  // News is read while it is new: a dated article's appeal halves every `halfLifeHours` of age (the back catalogue keeps its own).
  articles.forEach((a, i) => {
    if (a.published !== undefined) appeal[i] *= 2 ** (-Math.max(0, now - a.published) / 3600 / p.halfLifeHours);
  });
  const global = sampler(appeal, random);
  const bySub = new Map<number, number[]>();
  const byCategory = new Map<number, number[]>();
  const byStory = new Map<number, number[]>();
  articles.forEach((a, i) => {
    for (const [map, key] of [
      [bySub, a.subcategory],
      [byCategory, a.category],
      [byStory, a.story],
    ] as const) {
      const list = map.get(key) ?? [];
      list.push(i);
      map.set(key, list);
    }
  });
  const samplers = new Map<string, () => number>();
  const within = (kind: string, key: number, members: number[]) => {
    const id = `${kind}${key}`;
    let s = samplers.get(id);
    if (!s) {
      const pick = sampler(
        members.map((m) => appeal[m]),
        random,
      );
      samplers.set(id, (s = () => members[pick()]));
    }
    return s();
  };

  const views: NewsView[] = [];
  const perReader: number[] = [];
  for (let r = 0; r < p.readers; r++) {
    const length = Math.min(p.maxHistory, Math.floor(1 / (1 - random()) ** (1 / p.activity)));
    const favourites = [pickCategory(), pickCategory()].slice(0, random() < 0.5 ? 1 : 2);
    const read = new Set<number>();
    let current = -1;
    let t = now - span + Math.floor(random() * span);
    for (let k = 0; k < length; k++) {
      let next = -1;
      for (let attempt = 0; attempt < 8 && (next < 0 || read.has(next)); attempt++) {
        const x = random();
        const fav = favourites[Math.floor(random() * favourites.length)];
        if (current < 0) next = x < 0.55 ? global() : within('c', fav, byCategory.get(fav)!);
        else if (x < p.story) {
          const members = byStory.get(articles[current].story)!;
          next = members[Math.floor(random() * members.length)];
        } else if (x < p.story + p.subcategory) next = within('s', articles[current].subcategory, bySub.get(articles[current].subcategory)!);
        else if (x < p.story + p.subcategory + p.taste) next = within('c', fav, byCategory.get(fav)!);
        else next = global();
      }
      if (read.has(next)) continue;
      read.add(next);
      current = next;
      const a = articles[next];
      views.push({
        reader: `reader-${r}`,
        url: a.url,
        t,
        title: a.title,
        ...(a.titleOnly
          ? {}
          : { desc: `About ${a.title}`, category: CATEGORIES[a.category], themes: [`sub-${a.subcategory}`], ...(a.published !== undefined ? { published: a.published } : {}) }),
      });
      t += 30 + Math.floor(random() * 300);
    }
    perReader.push(read.size);
  }
  views.sort((a, b) => a.t - b.t);

  const counts = new Map<string, number>();
  for (const v of views) counts.set(v.url, (counts.get(v.url) ?? 0) + 1);
  const sorted = [...counts.values()].sort((a, b) => b - a);
  const topN = Math.max(1, Math.floor(articles.length / 100));
  const active = perReader.filter((n) => n > 0);
  return {
    views,
    stats: {
      views: views.length,
      articlesViewed: counts.size,
      topPercentShare: sorted.slice(0, topN).reduce((s, n) => s + n, 0) / views.length,
      readOnceOrTwice: sorted.filter((n) => n <= 2).length / counts.size,
      readersOneToThree: active.filter((n) => n <= 3).length / active.length,
      titleOnly: articles.filter((a) => a.titleOnly).length,
      withoutPublished: articles.filter((a) => a.published === undefined).length,
    },
  };
}
