/**
 * The week scenario of the realistic quality benchmark, its default
 * (`npm run bench:recos:realistic`): a week of news,
 * calibrated on what the real click log of issue 30 showed (most read scores
 * low there, unlike on the 6-hour log of bench/recos-news-log.ts, whose
 * readers and articles share one window). The differences from that log:
 *
 * - news is published all week long (and the day before); each day's
 *   articles have their own Zipf appeal (every day has its top stories),
 *   halving every 12 h of age and 0 before publication;
 * - a back catalogue (30 % of the articles, published 2–30 days before the
 *   week, never dated) is read a little all along (appeal × 0.15); half of
 *   the news is not dated either (sites that do not send `published_time`);
 * - readers come back: after a view the visit ends with probability 0.25
 *   and the next one starts after an exponential pause (mean 24 h), from
 *   what everyone reads or a favourite category, not from the last article;
 * - the held-out clicks are at the end (the benchmark holds out readers
 *   whose last view is in the last 24 h) and the views are dated by their
 *   log time (bench/sim-clock.ts), so the service's popularity decays as it
 *   would over a real week instead of seeing the week in three minutes.
 *
 * Same categories, stories, next-click mixture and reader activity as the
 * 6-hour log; deterministic (seeded).
 */
import { CATEGORIES, sampler, type NewsLog, type NewsView } from './recos-news-log.js';
import { prng } from './recos-data.js';

export interface NewsWeekOptions {
  articles: number;
  readers: number;
  seed?: number;
  /** Zipf exponent of article appeal. */
  zipf?: number;
  /** Pareto exponent of the number of views per reader (P(L ≥ k) = k^-α). */
  activity?: number;
  /** Longest history. */
  maxHistory?: number;
  /** How long the log runs (hours): news is published throughout, readers come back over it. */
  spanHours?: number;
  /** Share of the articles from before the log (the back catalogue: no `published_time`, read a little all along). */
  backCatalogue?: number;
  /** Appeal of a back-catalogue article relative to news of the same rank. */
  backAppeal?: number;
  /** Share of the news articles whose views carry no `published_time` either (sites that do not send it). */
  undatedNews?: number;
  /** Share of the top 1 % articles whose views carry only a title. */
  titleOnlyTop?: number;
  /** Next-click mixture: same story, same subcategory, favourite category; the rest follows the crowd. */
  story?: number;
  subcategory?: number;
  taste?: number;
  /** A news article's appeal halves every this many hours of age. */
  halfLifeHours?: number;
  /** Chance that a visit ends after a view; the reader comes back after an exponential pause of this mean (hours). */
  leave?: number;
  returnHours?: number;
}

/**
 * The calibrated defaults (docs/benchmarks.md#recommendation-quality): most
 * read lands at 4–8 % of the held-out clicks (near the real log's), because
 * what was read all week is not what a reader clicks at the end of it.
 */
export const WEEK_DEFAULTS = {
  zipf: 0.95,
  activity: 1.6,
  maxHistory: 30,
  spanHours: 7 * 24,
  backCatalogue: 0.3,
  backAppeal: 0.15,
  undatedNews: 0.5,
  titleOnlyTop: 0.5,
  story: 0.2,
  subcategory: 0.25,
  taste: 0.2,
  halfLifeHours: 12,
  leave: 0.25,
  returnHours: 24,
} satisfies Partial<NewsWeekOptions>;

interface GenNews {
  url: string;
  title: string;
  category: number;
  subcategory: number;
  story: number;
  /** When it was published (the generator's truth; sent only when `dated`). */
  published: number;
  dated: boolean;
  back: boolean;
  titleOnly: boolean;
}

export function generateNewsWeek(o: NewsWeekOptions): NewsLog {
  const p = { ...WEEK_DEFAULTS, ...o };
  const random = prng(p.seed ?? 11);
  const end = Math.floor(Date.now() / 1000);
  const span = Math.round(p.spanHours * 3600);
  const start = end - span;
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
    // News is published throughout the log (and a day before it); the back catalogue 2–30 days before it.
    const back = random() < p.backCatalogue;
    const published = back ? start - 86_400 * (2 + Math.floor(random() * 28)) : start - 86_400 + Math.floor(random() * (span + 86_400));
    for (let i = 0; i < size && articles.length < p.articles; i++) {
      const index = articles.length;
      articles.push({
        url: `https://news.example/${CATEGORIES[category]}/s${subcategory}/a${index}`,
        title: `Story ${story}, part ${i + 1}: article ${index}`,
        category,
        subcategory,
        story,
        published: Math.min(end, published + i * 1800),
        dated: !back && random() >= p.undatedNews,
        back,
        titleOnly: false,
      });
    }
    story++;
  }
  // Appeal: Zipf over a random order of each day's articles (every day has its top stories; the back catalogue is one cohort, its appeal reduced).
  const order = articles.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const cohort = (a: GenNews) => (a.back ? -1 : Math.floor((a.published - start) / 86_400));
  const ranks = new Map<number, number>();
  const appeal = new Float64Array(articles.length);
  for (const i of order) {
    const c = cohort(articles[i]);
    const rank = ranks.get(c) ?? 0;
    ranks.set(c, rank + 1);
    appeal[i] = (1 / (rank + 1) ** p.zipf) * (articles[i].back ? p.backAppeal : 1);
  }
  const top = Math.max(1, Math.floor(articles.length / 100));
  const byAppeal = order.slice().sort((x, y) => appeal[y] - appeal[x]);
  byAppeal.forEach((i, rank) => (articles[i].titleOnly = rank < top ? random() < p.titleOnlyTop : random() < 0.05));
  // News is read while it is new: its appeal halves every `halfLifeHours` of age, and is 0 before it is published; the back catalogue's stays.
  const alive = (i: number, t: number) => {
    const a = articles[i];
    if (a.back) return 1;
    if (t < a.published) return 0;
    return 2 ** (-(t - a.published) / 3600 / p.halfLifeHours);
  };
  // What everyone reads, hour by hour.
  const hourly = new Map<number, () => number>();
  const global = (t: number) => {
    const hour = Math.floor((t - start) / 3600);
    let s = hourly.get(hour);
    if (!s) {
      const at = start + hour * 3600 + 1800;
      const weights = new Float64Array(articles.length);
      for (let i = 0; i < articles.length; i++) weights[i] = appeal[i] * alive(i, at);
      hourly.set(hour, (s = sampler(weights, random)));
    }
    return s();
  };
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
  // An article of a group by appeal among those alive at `t` (by rejection; what everyone reads when none is).
  const within = (kind: string, key: number, members: number[], t: number) => {
    const id = `${kind}${key}`;
    let s = samplers.get(id);
    if (!s) {
      const pick = sampler(
        members.map((m) => appeal[m]),
        random,
      );
      samplers.set(id, (s = () => members[pick()]));
    }
    for (let attempt = 0; attempt < 30; attempt++) {
      const i = s();
      if (random() < alive(i, t)) return i;
    }
    return global(t);
  };

  const views: NewsView[] = [];
  const perReader: number[] = [];
  for (let r = 0; r < p.readers; r++) {
    const length = Math.min(p.maxHistory, Math.floor(1 / (1 - random()) ** (1 / p.activity)));
    const favourites = [pickCategory(), pickCategory()].slice(0, random() < 0.5 ? 1 : 2);
    const read = new Set<number>();
    let current = -1;
    let t = start + Math.floor(random() * span);
    for (let k = 0; k < length && t <= end; k++) {
      let next = -1;
      for (let attempt = 0; attempt < 8 && (next < 0 || read.has(next)); attempt++) {
        const x = random();
        const fav = favourites[Math.floor(random() * favourites.length)];
        if (current < 0) next = x < 0.55 ? global(t) : within('c', fav, byCategory.get(fav)!, t);
        else if (x < p.story) next = within('t', articles[current].story, byStory.get(articles[current].story)!, t);
        else if (x < p.story + p.subcategory) next = within('s', articles[current].subcategory, bySub.get(articles[current].subcategory)!, t);
        else if (x < p.story + p.subcategory + p.taste) next = within('c', fav, byCategory.get(fav)!, t);
        else next = global(t);
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
        ...(a.titleOnly ? {} : { desc: `About ${a.title}`, category: CATEGORIES[a.category], themes: [`sub-${a.subcategory}`], ...(a.dated ? { published: a.published } : {}) }),
      });
      // The next view of the visit, or a visit later: a new visit starts from the front page, not from this article.
      if (random() < p.leave) {
        t += Math.floor(-Math.log(1 - random()) * p.returnHours * 3600);
        current = -1;
      } else t += 30 + Math.floor(random() * 300);
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
      withoutPublished: articles.filter((a) => !a.dated).length,
    },
  };
}
