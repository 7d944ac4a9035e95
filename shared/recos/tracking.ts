import { addView } from './ranking.js';
import { freshListable } from './settings.js';
import type { RecosStore } from './store.js';
import { articleGuid } from './urls.js';
import type { Article, Reader } from './types.js';

/** Storage bounds per reader and per article (docs/architecture.md "Recommendations: storage"). */
export const LIMITS = {
  /** Most recent distinct reads kept per reader. */
  readsPerReader: 100,
  /** Implicit themes kept per reader (strongest first). */
  tastesPerReader: 30,
  /** Themes kept per article. */
  themesPerArticle: 20,
  /** Explicit preferences per reader. */
  preferencesPerReader: 50,
  /** Two page views of a reader belong to one session when at most this far apart. */
  sessionGapSeconds: 30 * 60,
  /** A new read is co-counted with at most this many earlier reads of the same session. */
  sessionPairs: 4,
  /** A reader's item expires this long after their last page view. */
  readerTtlDays: 180,
  /** An article (and its co-visits) expires this long after its last page view. */
  articleTtlDays: 365,
  /** Implicit tastes decay by this factor at each new read. */
  tasteDecay: 0.9,
};

/** A page view as the tracking endpoint accepts it, already validated and normalised. */
export interface PageView {
  userId: string;
  /** Canonical URL (`canonicalUrl`). */
  url: string;
  title?: string;
  desc?: string;
  image?: string;
  category?: string;
  /** Unix seconds. */
  published?: number;
  themes?: string[];
}

/** What a page or the catalogue says about an article (no reader). */
export type ArticleMeta = Omit<PageView, 'userId'>;

/**
 * The article with metadata refreshed from a page or the catalogue: given
 * fields replace stored ones, absent or empty ones keep them; counters are
 * untouched (a new article has none yet and is published now unless told).
 */
export function withMetadata(previous: Article | undefined, meta: ArticleMeta, now: number): Article {
  const pick = (value: string | undefined, old: string | undefined) => (value !== undefined && value !== '' ? value : (old ?? ''));
  return {
    guid: articleGuid(meta.url),
    url: meta.url,
    title: pick(meta.title, previous?.title),
    desc: pick(meta.desc, previous?.desc),
    image: pick(meta.image, previous?.image),
    category: pick(meta.category, previous?.category),
    themes: meta.themes && meta.themes.length > 0 ? meta.themes.slice(0, LIMITS.themesPerArticle) : (previous?.themes ?? []),
    published: meta.published ?? previous?.published ?? now,
    dated: meta.published !== undefined || (previous?.dated ?? false),
    firstSeen: previous?.firstSeen ?? now,
    lastSeen: previous?.lastSeen ?? now,
    views: previous?.views ?? 0,
    clicks: previous?.clicks ?? 0,
    hot: previous?.hot ?? 0,
  };
}

/** The article after one more view: metadata refreshed from what the page sent, popularity counted. */
export function mergeArticle(previous: Article | undefined, view: ArticleMeta, now: number): Article {
  const article = withMetadata(previous, view, now);
  return { ...article, lastSeen: now, views: article.views + 1, hot: addView(previous && previous.views > 0 ? previous.hot : undefined, now) };
}

/**
 * How much a co-read counts by how close in a session the two reads are:
 * adjacent reads 1, one read apart 1/2, then 1/3 and 1/4 (what a reader
 * opens right after a page says most about it).
 */
export const coReadWeight = (distance: number) => 1 / distance;

/**
 * The reader after reading `article` at `now`: the read takes its place by
 * time (newest first, one entry per article, capped), implicit tastes decay
 * and gain the article's themes (for a new read only). Also returns the
 * reads of the same session to co-count with it, with their weights
 * (`coReadWeight` of their distance; empty when the article was
 * read before): the nearest earlier ones, and, when views arrive out of
 * order (one reader's views spread over page-view batches that run at once),
 * the later ones it is the session predecessor of, at most
 * `LIMITS.sessionPairs` each way. Applying a reader's views in any order
 * counts each pair once, as in time order, as long as each is merged into a
 * state that holds the others applied before it.
 */
export function mergeReader(previous: Reader | undefined, userId: string, article: Article, now: number): { reader: Reader; session: string[]; weights: number[] } {
  const reads = previous?.reads ?? [];
  const readBefore = reads.some((r) => r.g === article.guid);
  const session: string[] = [];
  const weights: number[] = [];
  if (!readBefore) {
    // Reads are newest first: the earlier ones are after the insertion point, the later ones before it (nearest first both ways).
    const at = reads.findIndex((r) => r.t <= now);
    const earlier = at < 0 ? [] : reads.slice(at);
    const later = (at < 0 ? reads : reads.slice(0, at)).slice().reverse();
    for (const side of [earlier, later]) {
      let last = now;
      let taken = 0;
      for (const r of side) {
        if (Math.abs(last - r.t) > LIMITS.sessionGapSeconds || taken >= LIMITS.sessionPairs) break;
        session.push(r.g);
        taken++;
        weights.push(coReadWeight(taken));
        last = r.t;
      }
    }
  }
  let tastes = previous?.tastes ?? {};
  if (!readBefore && article.themes.length > 0) {
    const next: Record<string, number> = {};
    for (const [theme, weight] of Object.entries(tastes)) next[theme] = weight * LIMITS.tasteDecay;
    for (const theme of article.themes) next[theme] = (next[theme] ?? 0) + 1;
    tastes = Object.fromEntries(
      Object.entries(next)
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
        .slice(0, LIMITS.tastesPerReader)
        .map(([theme, weight]) => [theme, Math.round(weight * 1000) / 1000]),
    );
  }
  // A read again keeps its latest time (a view applied late, out of order, does not move it back).
  const at = Math.max(now, reads.find((r) => r.g === article.guid)?.t ?? now);
  const others = reads.filter((r) => r.g !== article.guid);
  const position = others.findIndex((r) => r.t <= at);
  const ordered = position < 0 ? [...others, { g: article.guid, t: at }] : [...others.slice(0, position), { g: article.guid, t: at }, ...others.slice(position)];
  return {
    reader: {
      userId,
      reads: ordered.slice(0, LIMITS.readsPerReader),
      tastes,
      lastSeen: Math.max(previous?.lastSeen ?? now, now),
    },
    session,
    weights,
  };
}

/**
 * Records a page view: counts it on the article (creating it, refreshing its
 * metadata; not for an article deleted from the catalogue, whose views are
 * not counted) while reading the reader, then stores the reader's reads and
 * tastes and the co-visits of the article with the reader's earlier reads of
 * the same session; an article's first view puts it on the fresh list.
 */
export async function trackPageView(store: RecosStore, clientId: string, view: PageView, now: number): Promise<Article | undefined> {
  const [{ reader }, article] = await Promise.all([store.context(clientId, { userId: view.userId }), store.recordView(clientId, view, now)]);
  // A deleted article (DELETE /v1/articles) is not counted, nor read, nor co-visited.
  if (!article) return undefined;
  const merged = mergeReader(reader, view.userId, article, now);
  // An article's first view puts it on the fresh list, as the catalogue does (once per article: a fresh candidate before it is popular);
  // only with a publication time from the page: a page without one is dated by its first view, which says nothing of its age.
  const isNew = article.views === 1 && view.published !== undefined && freshListable(article.published, now);
  await Promise.all([
    store.putReader(clientId, merged.reader),
    merged.session.length > 0 ? store.addCovisits(clientId, article.guid, Object.fromEntries(merged.session.map((g, i) => [g, merged.weights[i]]))) : undefined,
    isNew ? store.addFresh(clientId, [{ guid: article.guid, published: article.published }], now) : undefined,
  ]);
  return article;
}
