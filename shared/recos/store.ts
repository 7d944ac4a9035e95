import { addView } from './ranking.js';
import { mergeArticle, withMetadata, type ArticleMeta, type PageView } from './tracking.js';
import { freshListable } from './settings.js';
import type { ArticleViews } from './view-batch.js';
import type { Article, Covisits, FreshEntry, Preferences, Reader } from './types.js';
import { articleGuid } from './urls.js';
import type { Client } from '../clients/clients.js';
import type { NeighbourSnapshot } from './neighbours.js';

/**
 * What the recommendation services need from storage. The DynamoDB store
 * (`dynamo-store.ts`) serves the API; the memory store serves the offline
 * evaluation and the benchmark's data generation, with the same semantics.
 */
export interface RecosStore {
  /**
   * In one round trip, whichever of these exist: the reader, their preferences, an article, its co-visits, the
   * client's fresh list, (`deletions`) the guids of articles deleted lately (at least the last
   * `DELETION_WINDOW` seconds: longer than any cached copy lives), (`client`) the client record and (`neighbours`)
   * the article's neighbour snapshot (shared/recos/neighbours.ts). With `cached`, the fresh list may be the
   * container's copy while the client's fresh-list version matches it.
   */
  context(
    clientId: string,
    q: { userId?: string; guid?: string; preferences?: boolean; covisits?: boolean; neighbours?: boolean; fresh?: boolean; deletions?: boolean; client?: boolean; cached?: boolean },
  ): Promise<{ reader?: Reader; preferences?: Preferences; article?: Article; covisits?: Covisits; neighbours?: NeighbourSnapshot; fresh?: FreshEntry[]; deleted?: Set<string>; client?: Client }>;
  /** Co-read counts and neighbour snapshots of articles (a reader's previous reads: ranking seeds), in one round trip. */
  coReads(clientId: string, guids: string[]): Promise<Map<string, SeedCoReads>>;
  /**
   * The `limit` most popular articles (decayed popularity), most popular first. With `cached`, a list read up to
   * `READ_CACHE_SECONDS` before `now` may answer (it may still name articles deleted since: callers drop those).
   */
  hotArticles(clientId: string, limit: number, o?: { cached?: boolean; now?: number }): Promise<Article[]>;
  /**
   * Articles by guid (at most 100 guids); unknown and deleted ones are left out. With `cached`, copies up to
   * `READ_CACHE_SECONDS` old may answer, except for the guids in `uncached` (read from storage).
   */
  articles(clientId: string, guids: string[], o?: { cached?: boolean; uncached?: Set<string> }): Promise<Article[]>;
  /**
   * Puts catalogue articles on the client's fresh list (the newest
   * FRESH_LIST_CAP by publication time are kept; older than
   * MAX_FRESHNESS_HOURS are dropped). Callers batch (one write per 100).
   */
  addFresh(clientId: string, entries: FreshEntry[], now: number): Promise<void>;
  /**
   * Counts one page view of an article (creating it), refreshing its metadata
   * from what the page sent, and returns the article after it. Concurrent views
   * of one article all count (no read-modify-write). An article deleted from
   * the catalogue is not counted (undefined).
   */
  recordView(clientId: string, view: PageView, now: number): Promise<Article | undefined>;
  /**
   * Creates or updates a catalogue article's metadata (counters untouched).
   * A deleted article comes back with `revive` (PUT /v1/articles); without
   * it (a feed) it stays deleted: undefined.
   */
  upsertArticle(clientId: string, meta: ArticleMeta, now: number, o?: { revive?: boolean }): Promise<{ article: Article; created: boolean } | undefined>;
  /** Deletes an article with its counters, co-visits and fresh-list entry, for good (later views are not counted); false when unknown. */
  deleteArticle(clientId: string, guid: string): Promise<boolean>;
  putReader(clientId: string, reader: Reader): Promise<void>;
  /** Adds a co-read of `guid` with each of `others` (guid → weight: `coReadWeight`), in both directions. */
  addCovisits(clientId: string, guid: string, others: Covisits): Promise<void>;
  putPreferences(clientId: string, preferences: Preferences): Promise<void>;
  /** Counts a click on a known article and returns it; undefined when unknown. */
  recordClick(clientId: string, guid: string): Promise<Article | undefined>;
}

/**
 * What the page-view consumer (`applyViewBatch`) needs from storage: the
 * DynamoDB implementation is `DynamoViewStore` (dynamo-views.ts, kept out of
 * the request functions' bundles); the memory store has the same semantics.
 */
export interface ViewBatchStore extends Pick<RecosStore, 'addFresh'> {
  /**
   * The page-view consumer's article updates: per article, its views of a
   * batch counted at once (count and popularity mass added, metadata
   * refreshed, no read-modify-write, so concurrent batches all count). Per
   * group, in order: the article after it, undefined for a deleted article
   * (not counted), or the Error its update failed with (nothing applied).
   */
  recordViews(clientId: string, groups: ArticleViews[]): Promise<Array<Article | undefined | Error>>;
  /** Readers by user id with the version they were written at (unknown ones are left out); `consistent`: strongly consistent reads. */
  readers(clientId: string, userIds: string[], o?: { consistent?: boolean }): Promise<Map<string, VersionedReader>>;
  /**
   * Stores readers, each only if it is still at the version it was read at
   * (`version` undefined: only if it does not exist), as the next version;
   * returns the user ids whose reader changed meanwhile (nothing written for
   * them: the caller reads them again and merges again).
   */
  putReaders(clientId: string, writes: VersionedReader[]): Promise<string[]>;
  /** Adds co-read counts: article guid → (other guid → count), one update per article. */
  addCovisitCounts(clientId: string, counts: Map<string, Record<string, number>>): Promise<void>;
  /**
   * Rewrites the neighbour snapshots (shared/recos/neighbours.ts) of the articles whose views `recordViews` counted
   * and whose snapshot was due; returns how many it wrote. Optional: the memory store has no snapshots.
   */
  refreshNeighbours?(clientId: string): Promise<number>;
}

/** An article's co-read counts and neighbour snapshot, when it has them. */
export interface SeedCoReads {
  covisits?: Covisits;
  neighbours?: NeighbourSnapshot;
}

/** A reader as stored, with its version (undefined: not stored yet). */
export interface VersionedReader {
  reader: Reader;
  version: number | undefined;
}

/** Co-visit items keep the strongest COVISIT_CAP neighbours once they grow past COVISIT_PRUNE_AT. */
export const COVISIT_CAP = 100;
export const COVISIT_PRUNE_AT = 150;

/** Entries kept on a client's fresh list. */
export const FRESH_LIST_CAP = 500;

/** The fresh list after adding entries: newest first by publication, only listable ones (freshListable: within MAX_FRESHNESS_HOURS, not far ahead), at most FRESH_LIST_CAP. */
export function pruneFresh(entries: FreshEntry[], now: number): FreshEntry[] {
  const byGuid = new Map(entries.map((e) => [e.guid, e]));
  return [...byGuid.values()]
    .filter((e) => freshListable(e.published, now))
    .sort((a, b) => b.published - a.published || (a.guid < b.guid ? -1 : 1))
    .slice(0, FRESH_LIST_CAP);
}

/** Keeps the `cap` largest counts (ties by guid). */
export function pruneCovisits(counts: Covisits, cap = COVISIT_CAP): Covisits {
  return Object.fromEntries(
    Object.entries(counts)
      .sort(([ga, a], [gb, b]) => b - a || (ga < gb ? -1 : 1))
      .slice(0, cap),
  );
}

/**
 * An in-memory store (offline evaluation, benchmark data generation). With
 * `popularRefreshSeconds`, a `cached` popular list is a snapshot taken at most
 * that long before the request's `now`, as a container's cached list is (the
 * offline evaluation measures the staleness).
 */
export class MemoryStore implements RecosStore, ViewBatchStore {
  constructor(private readonly options: { popularRefreshSeconds?: number } = {}) {}
  private snapshots = new Map<string, { at: number; list: Article[] }>();

  readonly articleMap = new Map<string, Map<string, Article>>();
  readonly readerMap = new Map<string, Map<string, Reader>>();
  readonly preferenceMap = new Map<string, Map<string, Preferences>>();
  readonly covisitMap = new Map<string, Map<string, Covisits>>();
  readonly freshMap = new Map<string, FreshEntry[]>();
  /** Deleted articles (tombstones), per client. */
  readonly deletedMap = new Map<string, Set<string>>();
  private hotCache = new Map<string, { version: number; list: Article[] }>();
  private version = 0;

  private of<T>(map: Map<string, Map<string, T>>, clientId: string): Map<string, T> {
    let inner = map.get(clientId);
    if (!inner) map.set(clientId, (inner = new Map<string, T>()));
    return inner;
  }

  async context(clientId: string, q: { userId?: string; guid?: string; preferences?: boolean; covisits?: boolean; fresh?: boolean; deletions?: boolean; client?: boolean }) {
    return {
      deleted: q.deletions ? new Set(this.deletedMap.get(clientId)) : undefined,
      fresh: q.fresh ? this.freshMap.get(clientId) : undefined,
      reader: q.userId ? this.of(this.readerMap, clientId).get(q.userId) : undefined,
      preferences: q.userId && q.preferences ? this.of(this.preferenceMap, clientId).get(q.userId) : undefined,
      article: q.guid ? this.of(this.articleMap, clientId).get(q.guid) : undefined,
      covisits: q.guid && q.covisits ? this.of(this.covisitMap, clientId).get(q.guid) : undefined,
    };
  }

  async coReads(clientId: string, guids: string[]): Promise<Map<string, SeedCoReads>> {
    const map = this.of(this.covisitMap, clientId);
    return new Map(guids.filter((g) => map.has(g)).map((g) => [g, { covisits: map.get(g) }]));
  }

  async hotArticles(clientId: string, limit: number, o: { cached?: boolean; now?: number } = {}): Promise<Article[]> {
    const every = this.options.popularRefreshSeconds;
    if (o.cached && every && o.now !== undefined) {
      const snapshot = this.snapshots.get(clientId);
      if (snapshot && o.now >= snapshot.at && o.now - snapshot.at < every) return snapshot.list.slice(0, limit);
      const list = await this.hotArticles(clientId, Math.max(limit, 500));
      this.snapshots.set(clientId, { at: o.now, list });
      return list.slice(0, limit);
    }
    const cached = this.hotCache.get(clientId);
    if (cached && cached.version === this.version && cached.list.length >= limit) return cached.list.slice(0, limit);
    const list = [...this.of(this.articleMap, clientId).values()].filter((a) => a.views > 0).sort((a, b) => b.hot - a.hot).slice(0, Math.max(limit, 500));
    this.hotCache.set(clientId, { version: this.version, list });
    return list.slice(0, limit);
  }

  async articles(clientId: string, guids: string[]): Promise<Article[]> {
    const map = this.of(this.articleMap, clientId);
    return guids.map((g) => map.get(g)).filter((a): a is Article => a !== undefined);
  }

  async addFresh(clientId: string, entries: FreshEntry[], now: number): Promise<void> {
    this.freshMap.set(clientId, pruneFresh([...(this.freshMap.get(clientId) ?? []), ...entries], now));
  }

  async upsertArticle(clientId: string, meta: ArticleMeta, now: number, { revive = true } = {}): Promise<{ article: Article; created: boolean } | undefined> {
    if (!revive && this.deletedMap.get(clientId)?.has(articleGuid(meta.url))) return undefined;
    const map = this.of(this.articleMap, clientId);
    const previous = map.get(articleGuid(meta.url));
    const article = withMetadata(previous, meta, now);
    map.set(article.guid, article);
    this.deletedMap.get(clientId)?.delete(article.guid);
    this.version++;
    return { article, created: !previous };
  }

  async deleteArticle(clientId: string, guid: string): Promise<boolean> {
    const map = this.of(this.articleMap, clientId);
    if (!map.delete(guid)) return false;
    this.of(this.covisitMap, clientId).delete(guid);
    this.freshMap.set(clientId, (this.freshMap.get(clientId) ?? []).filter((e) => e.guid !== guid));
    if (!this.deletedMap.has(clientId)) this.deletedMap.set(clientId, new Set());
    this.deletedMap.get(clientId)!.add(guid);
    this.version++;
    return true;
  }

  async recordView(clientId: string, view: PageView, now: number): Promise<Article | undefined> {
    if (this.deletedMap.get(clientId)?.has(articleGuid(view.url))) return undefined;
    const map = this.of(this.articleMap, clientId);
    const article = mergeArticle(map.get(articleGuid(view.url)), view, now);
    map.set(article.guid, article);
    this.version++;
    return article;
  }

  async putReader(clientId: string, reader: Reader): Promise<void> {
    this.of(this.readerMap, clientId).set(reader.userId, reader);
  }

  async recordViews(clientId: string, groups: ArticleViews[]): Promise<Array<Article | undefined>> {
    const map = this.of(this.articleMap, clientId);
    return groups.map((g) => {
      if (this.deletedMap.get(clientId)?.has(g.guid)) return undefined;
      const previous = map.get(g.guid);
      const base = withMetadata(previous, g.meta, g.times[0]);
      let hot = previous && previous.views > 0 ? previous.hot : undefined;
      for (const t of g.times) hot = addView(hot, t);
      const article = { ...base, lastSeen: Math.max(base.lastSeen, g.times[g.times.length - 1]), views: base.views + g.times.length, hot: hot! };
      map.set(g.guid, article);
      this.version++;
      return { ...article };
    });
  }

  private readerVersions = new Map<string, number>();

  async readers(clientId: string, userIds: string[]): Promise<Map<string, VersionedReader>> {
    const map = this.of(this.readerMap, clientId);
    return new Map(userIds.flatMap((id) => (map.has(id) ? [[id, { reader: map.get(id)!, version: this.readerVersions.get(`${clientId}\n${id}`) ?? 0 }] as const] : [])));
  }

  async putReaders(clientId: string, writes: VersionedReader[]): Promise<string[]> {
    const conflicts: string[] = [];
    for (const { reader, version } of writes) {
      const key = `${clientId}\n${reader.userId}`;
      const stored = this.of(this.readerMap, clientId).has(reader.userId) ? (this.readerVersions.get(key) ?? 0) : undefined;
      if (stored !== version) conflicts.push(reader.userId);
      else {
        this.of(this.readerMap, clientId).set(reader.userId, reader);
        this.readerVersions.set(key, (version ?? 0) + 1);
      }
    }
    return conflicts;
  }

  async addCovisitCounts(clientId: string, counts: Map<string, Record<string, number>>): Promise<void> {
    const map = this.of(this.covisitMap, clientId);
    for (const [guid, add] of counts) {
      const current = { ...(map.get(guid) ?? {}) };
      for (const [other, n] of Object.entries(add)) current[other] = (current[other] ?? 0) + n;
      map.set(guid, Object.keys(current).length > COVISIT_PRUNE_AT ? pruneCovisits(current) : current);
    }
  }

  async addCovisits(clientId: string, guid: string, others: Covisits): Promise<void> {
    const map = this.of(this.covisitMap, clientId);
    const bump = (from: string, to: string, weight: number) => {
      const counts = map.get(from) ?? {};
      counts[to] = (counts[to] ?? 0) + weight;
      map.set(from, Object.keys(counts).length > COVISIT_PRUNE_AT ? pruneCovisits(counts) : counts);
    };
    for (const [other, weight] of Object.entries(others)) {
      bump(guid, other, weight);
      bump(other, guid, weight);
    }
  }

  async putPreferences(clientId: string, preferences: Preferences): Promise<void> {
    this.of(this.preferenceMap, clientId).set(preferences.userId, preferences);
  }

  async recordClick(clientId: string, guid: string): Promise<Article | undefined> {
    const article = this.of(this.articleMap, clientId).get(guid);
    if (article) article.clicks++;
    return article;
  }
}
