/**
 * The recommendation store ports: what the request paths (`RecosStore`) and
 * the page-view consumer (`ViewBatchStore`) need from storage. The DynamoDB
 * adapters are dynamo-store.ts and dynamo-views.ts; an in-memory store with
 * the same semantics is test/helpers/recos-memory-store.ts (tests, benches).
 */
import type { Client } from '../clients/clients.js';
import type { NeighbourSnapshot } from './neighbours.js';
import type { Article, ArticleMeta, ArticleViews, Covisits, FreshEntry, Preferences, Reader } from './types.js';

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
   * Creates or updates a catalogue article's metadata (counters untouched).
   * A deleted article comes back with `revive` (PUT /v1/articles); without
   * it (a feed) it stays deleted: undefined.
   */
  upsertArticle(clientId: string, meta: ArticleMeta, now: number, o?: { revive?: boolean }): Promise<{ article: Article; created: boolean } | undefined>;
  /** Deletes an article with its counters, co-visits and fresh-list entry, for good (later views are not counted); false when unknown. */
  deleteArticle(clientId: string, guid: string): Promise<boolean>;
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
  /**
   * Rewrites the client's popular snapshot (shared/recos/read-cache.ts) when its refresh period is over and no other
   * consumer took the turn; true when it wrote one. Optional: the memory store has no snapshot.
   */
  refreshPopular?(clientId: string): Promise<boolean>;
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

