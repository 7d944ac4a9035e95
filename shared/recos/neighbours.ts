/**
 * Precomputed co-read neighbours: the page-view consumer keeps, per article read, a snapshot of its strongest co-reads
 * outside the popular list, so a request reads them in its one context BatchGetItem. Snapshots younger than
 * `NEIGHBOUR_MAX_AGE_SECONDS` cannot hold an article deleted before the deletion windows a request reads.
 */
import { DELETION_WINDOW } from './read-cache.js';
import type { Article, Covisits } from './types.js';

/** Neighbours kept per snapshot: the 10 a request takes, and 2 more for fresh articles it leaves out. */
export const NEIGHBOUR_SNAPSHOT_SIZE = 12;
/** A viewed article's snapshot is rewritten when older than this (seconds, by view time). */
export const NEIGHBOUR_REFRESH_SECONDS = 60;
/** Requests use a snapshot younger than this (seconds): a minute inside the deletion windows they read. */
export const NEIGHBOUR_MAX_AGE_SECONDS = DELETION_WINDOW - 60;

/** Attribute of the article item: the view time its snapshot was last due (the consumer's refresh clock). */
export const NEIGHBOURS_AT = 'neighboursAt';

/** A snapshot: when its articles were read (Unix seconds) and the articles. */
export interface NeighbourSnapshot {
  at: number;
  articles: Article[];
}

/** The strongest co-read guids (ties by guid), leaving out `skip`: at most `n`. */
export function strongestNeighbours(counts: Covisits, skip: Set<string>, n = NEIGHBOUR_SNAPSHOT_SIZE): string[] {
  return Object.entries(counts)
    .filter(([guid]) => !skip.has(guid))
    .sort(([ga, a], [gb, b]) => b - a || (ga < gb ? -1 : 1))
    .slice(0, n)
    .map(([guid]) => guid);
}

type Packed = [string, string, string, string, string, string, string[], number, number, number, (0 | 1)?];

/** The snapshot's articles as one compact JSON string (one attribute: cheap to store, read and decode). */
export function packNeighbours(articles: Article[]): string {
  return JSON.stringify(articles.map((a): Packed => [a.guid, a.url, a.title, a.desc, a.image, a.category, a.themes, a.published, a.views, a.hot, a.dated === false ? 0 : 1]));
}

export function unpackNeighbours(json: string): Article[] {
  return (JSON.parse(json) as Packed[]).map(([guid, url, title, desc, image, category, themes, published, views, hot, dated]) => ({
    guid,
    url,
    title,
    desc,
    image,
    category,
    themes,
    published,
    ...(dated === 0 ? { dated: false } : {}),
    views,
    hot,
    firstSeen: published,
    lastSeen: published,
    clicks: 0,
  }));
}
