import { addView } from './ranking.js';
import { articleGuid } from './urls.js';
import type { Article, ArticleMeta, Reader } from './types.js';
import { LIMITS } from './limits.js';

export type { ArticleMeta, PageView } from './types.js';



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
 * The reader after reading `article` at `now` (reads newest first, one per article, capped; tastes decay and gain its
 * themes), and the same session's reads to co-count with it, weighted, earlier and (out of order) later, at most
 * `LIMITS.sessionPairs` each way: in any order each pair counts once, as in time order.
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

