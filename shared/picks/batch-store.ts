/**
 * The recommendation store of newsletter picks: answers the ranking's per-reader calls from bulk reads (a page of
 * members' records and preferences in BatchGetItems, the client's context once per `SHARED_CONTEXT_SECONDS`); popular
 * list and articles come from the container copies (read-cache.ts).
 */
import { batchGet } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { Client } from '../clients/clients.js';
import { strip, type Item } from '../recos/dynamo-items.js';
import { DynamoStore } from '../recos/dynamo-store.js';
import type { RecosStore, SeedCoReads } from '../recos/port.js';
import { READ_CACHE_SECONDS } from '../recos/read-cache.js';
import type { Article, FreshEntry, Preferences, Reader } from '../recos/types.js';

/** The client's part of the context (fresh list, deletions, client record) is read again after this long. */
export const SHARED_CONTEXT_SECONDS = READ_CACHE_SECONDS;

interface SharedContext {
  at: number;
  fresh: FreshEntry[];
  deleted: Set<string>;
  client?: Client;
}

/** Readers' records and preferences by user id (none stored: an empty entry). */
export type ReaderRecords = Map<string, { reader?: Reader; preferences?: Preferences }>;

/** Counts of what the store read: the benchmark's and the job's figures. */
export interface PicksStoreStats {
  readerBatches: number;
  sharedContexts: number;
}

export class PicksStore implements RecosStore {
  private readers: ReaderRecords = new Map();
  private shared?: SharedContext;
  readonly stats: PicksStoreStats = { readerBatches: 0, sharedContexts: 0 };

  constructor(
    private readonly clientId: string,
    private readonly base: DynamoStore = new DynamoStore(),
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** The client's shared context, read again once it is SHARED_CONTEXT_SECONDS old. */
  async sharedContext(): Promise<SharedContext> {
    const now = this.now();
    if (this.shared && now - this.shared.at < SHARED_CONTEXT_SECONDS) return this.shared;
    const c = await this.base.context(this.clientId, { fresh: true, deletions: true, client: true, cached: true });
    this.stats.sharedContexts++;
    this.shared = { at: now, fresh: c.fresh ?? [], deleted: c.deleted ?? new Set(), client: c.client };
    return this.shared;
  }

  /**
   * Reads the records and preferences of these readers: BatchGetItems of 100 keys (50 readers), several at once.
   * Readers without records rank as new readers (popularity, freshness). `useReaders` then answers from them.
   */
  async readReaders(userIds: string[]): Promise<ReaderRecords> {
    const unique = [...new Set(userIds)];
    const wanted = unique.flatMap((u) => [keys.reader(this.clientId, u), keys.readerPreferences(this.clientId, u)]);
    const items = wanted.length > 0 ? await batchGet<Item>(wanted) : [];
    this.stats.readerBatches += Math.ceil(wanted.length / 100);
    const prefix = keys.reader(this.clientId, '').pk;
    const readers: ReaderRecords = new Map(unique.map((u) => [u, {}]));
    for (const item of items) {
      const entry = readers.get((item.pk as string).slice(prefix.length));
      if (!entry) continue;
      if (item.sk === 'READS') entry.reader = strip<Reader>(item);
      else if (item.sk === 'PREFS') entry.preferences = strip<Preferences>(item);
    }
    return readers;
  }

  /** Answers contexts from these readers' records (a page of members; the previous page's go). */
  useReaders(readers: ReaderRecords): void {
    this.readers = readers;
  }

  /** A reader's context without a current page: from the loaded page of readers and the shared context; no call. */
  async context(clientId: string, q: { userId?: string; fresh?: boolean; deletions?: boolean; client?: boolean }) {
    this.check(clientId);
    const shared = await this.sharedContext();
    const mine = q.userId ? this.readers.get(q.userId) : undefined;
    if (q.userId && !mine) throw new Error(`reader ${q.userId} was not loaded (loadReaders first)`);
    return {
      reader: mine?.reader,
      preferences: mine?.preferences,
      fresh: q.fresh ? shared.fresh : undefined,
      deleted: q.deletions ? shared.deleted : undefined,
      client: q.client ? shared.client : undefined,
    };
  }

  /** The co-reads of a reader's reads of the last half hour (seeds): one BatchGetItem, only for readers who read that recently. */
  coReads(clientId: string, guids: string[]): Promise<Map<string, SeedCoReads>> {
    this.check(clientId);
    return this.base.coReads(clientId, guids);
  }

  hotArticles(clientId: string, limit: number, o: { cached?: boolean; now?: number } = {}): Promise<Article[]> {
    this.check(clientId);
    return this.base.hotArticles(clientId, limit, { ...o, cached: true });
  }

  articles(clientId: string, guids: string[], o: { cached?: boolean; uncached?: Set<string> } = {}): Promise<Article[]> {
    this.check(clientId);
    return this.base.articles(clientId, guids, { ...o, cached: true });
  }

  // The writes are the DynamoDB store's (the ranking never writes; here for the port's sake).
  addFresh(...args: Parameters<RecosStore['addFresh']>) {
    return this.base.addFresh(...args);
  }

  upsertArticle(...args: Parameters<RecosStore['upsertArticle']>) {
    return this.base.upsertArticle(...args);
  }

  deleteArticle(...args: Parameters<RecosStore['deleteArticle']>) {
    return this.base.deleteArticle(...args);
  }

  putPreferences(...args: Parameters<RecosStore['putPreferences']>) {
    return this.base.putPreferences(...args);
  }

  recordClick(...args: Parameters<RecosStore['recordClick']>) {
    return this.base.recordClick(...args);
  }

  private check(clientId: string): void {
    if (clientId !== this.clientId) throw new Error(`a picks store of client ${this.clientId} asked for client ${clientId}`);
  }
}
