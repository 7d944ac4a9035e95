/**
 * A generated click log with known structure, for the recommendation
 * benchmarks: articles with themes (their first theme is the category), an
 * intrinsic appeal and popularity that decays with age; readers with one or
 * two favourite themes; sessions in which readers often go on to another
 * article of the same story (the co-reading pattern). Deterministic (seeded).
 */

export interface GenArticle {
  index: number;
  url: string;
  title: string;
  category: string;
  themes: string[];
  story: number;
  published: number;
  appeal: number;
}

export interface GenView {
  reader: number;
  article: number;
  t: number;
  session: number;
}

export interface ClickLog {
  articles: GenArticle[];
  views: GenView[];
  readers: number;
  start: number;
  end: number;
}

export interface LogOptions {
  articles: number;
  views: number;
  readers: number;
  days: number;
  themes?: number;
  seed?: number;
  /** Probability that a reader's next read in a session is another article of the same story. */
  storyFollow?: number;
  /** Probability that a pick follows the reader's tastes rather than the crowd. */
  tasteFollow?: number;
}

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY = 86_400;
const THEME_NAMES = ['politics', 'climate', 'football', 'tennis', 'tech', 'ai', 'business', 'health', 'cooking', 'travel', 'cinema', 'music', 'science', 'cities', 'education', 'justice'];

/** Generates the log; views are in time order. */
export function generateClickLog(o: LogOptions): ClickLog {
  const random = prng(o.seed ?? 42);
  const themeCount = Math.min(o.themes ?? 12, THEME_NAMES.length);
  const themes = THEME_NAMES.slice(0, themeCount);
  const end = 1_790_000_000;
  const start = end - o.days * DAY;
  const storyFollow = o.storyFollow ?? 0.45;
  const tasteFollow = o.tasteFollow ?? 0.7;

  // Articles: stories of 2–6 articles sharing a main theme, published over the period.
  const articles: GenArticle[] = [];
  let story = 0;
  while (articles.length < o.articles) {
    const main = Math.floor(random() * themeCount);
    const size = 2 + Math.floor(random() * 5);
    const storyStart = start - 2 * DAY + random() * (o.days + 1) * DAY;
    for (let k = 0; k < size && articles.length < o.articles; k++) {
      const extra = random() < 0.5 ? [themes[Math.floor(random() * themeCount)]] : [];
      const index = articles.length;
      articles.push({
        index,
        url: `https://gazette.example/${themes[main]}/${story}/${index}`,
        title: `Story ${story}, part ${k + 1}`,
        category: themes[main],
        themes: [...new Set([themes[main], ...extra])],
        story,
        published: Math.floor(storyStart + k * random() * DAY),
        appeal: Math.exp(random() * 2.5),
      });
    }
    story++;
  }
  articles.sort((a, b) => a.published - b.published);
  articles.forEach((a, i) => (a.index = i));
  const byStory = new Map<number, GenArticle[]>();
  for (const a of articles) byStory.set(a.story, [...(byStory.get(a.story) ?? []), a]);

  const tastes = Array.from({ length: o.readers }, () => {
    const first = Math.floor(random() * themeCount);
    const set = new Set([themes[first]]);
    if (random() < 0.5) set.add(themes[Math.floor(random() * themeCount)]);
    return set;
  });
  const themeBit = new Map(themes.map((t, i) => [t, 1 << i]));
  const masks = Int32Array.from(articles, (a) => a.themes.reduce((m, t) => m | themeBit.get(t)!, 0));
  const tasteMasks = Int32Array.from(tastes, (set) => [...set].reduce((m, t) => m | themeBit.get(t)!, 0));
  const baseWeights = Float64Array.from(articles, (a) => a.appeal * 2 ** ((a.published - start) / (1.5 * DAY)));
  const weights = new Float64Array(articles.length);
  const activity = Array.from({ length: o.readers }, () => Math.exp(random() * 2));
  const activityTotal = activity.reduce((s, x) => s + x, 0);

  // Sessions at random times; each a few views.
  // Sessions average about 2.15 views; generate a margin, then drop random whole sessions to get exactly `views`.
  const sessionsNeeded = Math.ceil((o.views / 2.15) * 1.2);
  const sessionStarts = Array.from({ length: sessionsNeeded }, () => start + random() * (end - start - 3600)).sort((a, b) => a - b);
  const views: GenView[] = [];
  const readBy = Array.from({ length: o.readers }, () => new Set<number>());
  let lo = 0;
  let hi = 0;
  const pickReader = () => {
    let x = random() * activityTotal;
    for (let r = 0; r < o.readers; r++) if ((x -= activity[r]) <= 0) return r;
    return o.readers - 1;
  };
  for (let s = 0; s < sessionStarts.length; s++) {
    let t = sessionStarts[s];
    while (hi < articles.length && articles[hi].published <= t) hi++;
    while (lo < hi && articles[lo].published < t - 10 * DAY) lo++;
    if (hi === lo) continue;
    const reader = pickReader();
    const length = 1 + Math.floor(-Math.log(1 - random()) * 1.6);
    let previous: GenArticle | undefined;
    for (let v = 0; v < length; v++) {
      let chosen: GenArticle | undefined;
      if (previous && random() < storyFollow) {
        const siblings = (byStory.get(previous.story) ?? []).filter((a) => a.published <= t && !readBy[reader].has(a.index));
        if (siblings.length > 0) chosen = siblings[Math.floor(random() * siblings.length)];
      }
      if (!chosen) {
        // Weight ∝ appeal × 2^(−age / 1.5 days); the factor common to all articles at time t cancels out.
        const byTaste = random() < tasteFollow;
        const read = readBy[reader];
        let total = 0;
        for (let i = lo; i < hi; i++) {
          const w = read.has(i) || (byTaste && (masks[i] & tasteMasks[reader]) === 0) ? 0 : baseWeights[i];
          weights[i - lo] = w;
          total += w;
        }
        if (total === 0) break;
        let x = random() * total;
        for (let i = 0; i < hi - lo; i++) if ((x -= weights[i]) <= 0) {
          chosen = articles[lo + i];
          break;
        }
        chosen ??= articles[hi - 1];
      }
      readBy[reader].add(chosen.index);
      views.push({ reader, article: chosen.index, t: Math.floor(t), session: s });
      previous = chosen;
      t += 30 + random() * 300;
    }
  }
  const sizes = new Map<number, number>();
  for (const v of views) sizes.set(v.session, (sizes.get(v.session) ?? 0) + 1);
  const order = [...sizes.keys()];
  let surplus = views.length - o.views;
  const dropped = new Map<number, number>();
  while (surplus > 0 && order.length > 0) {
    const session = order.splice(Math.floor(random() * order.length), 1)[0];
    const n = Math.min(surplus, sizes.get(session)!);
    dropped.set(session, n);
    surplus -= n;
  }
  const kept: GenView[] = [];
  for (let i = views.length - 1; i >= 0; i--) {
    const left = dropped.get(views[i].session) ?? 0;
    if (left > 0) dropped.set(views[i].session, left - 1);
    else kept.push(views[i]);
  }
  kept.sort((a, b) => a.t - b.t);
  return { articles, views: kept, readers: o.readers, start, end };
}
