/**
 * An in-memory recommendation store with the DynamoDB adapters' semantics
 * (offline evaluation, benchmark data generation, unit tests), with the
 * one-by-one page-view writes of test/helpers/recos-oracle.ts.
 */
import { addView } from '../../shared/recos/ranking.js';
import { mergeArticle, withMetadata } from '../../shared/recos/tracking.js';
import { COVISIT_PRUNE_AT, pruneCovisits, pruneFresh } from '../../shared/recos/limits.js';
import type { RecosStore, SeedCoReads, VersionedReader, ViewBatchStore } from '../../shared/recos/port.js';
import type { Article, ArticleMeta, ArticleViews, Covisits, FreshEntry, PageView, Preferences, Reader } from '../../shared/recos/types.js';
import { articleGuid } from '../../shared/recos/urls.js';
import type { PerViewStore } from './recos-oracle.js';

/**
 * An in-memory store (offline evaluation, benchmark data generation). With
 * `popularRefreshSeconds`, a `cached` popular list is a snapshot taken at most
 * that long before the request's `now`, as a container's cached list is (the
 * offline evaluation measures the staleness). Its bodies work on maps and
 * cannot throw: methods answer with settled promises.
 */
export class MemoryStore implements RecosStore, ViewBatchStore, PerViewStore {
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

  context(clientId: string, q: { userId?: string; guid?: string; preferences?: boolean; covisits?: boolean; fresh?: boolean; deletions?: boolean; client?: boolean }) {
    return Promise.resolve({
      deleted: q.deletions ? new Set(this.deletedMap.get(clientId)) : undefined,
      fresh: q.fresh ? this.freshMap.get(clientId) : undefined,
      reader: q.userId ? this.of(this.readerMap, clientId).get(q.userId) : undefined,
      preferences: q.userId && q.preferences ? this.of(this.preferenceMap, clientId).get(q.userId) : undefined,
      article: q.guid ? this.of(this.articleMap, clientId).get(q.guid) : undefined,
      covisits: q.guid && q.covisits ? this.of(this.covisitMap, clientId).get(q.guid) : undefined,
    });
  }

  coReads(clientId: string, guids: string[]): Promise<Map<string, SeedCoReads>> {
    const map = this.of(this.covisitMap, clientId);
    return Promise.resolve(new Map(guids.filter((g) => map.has(g)).map((g) => [g, { covisits: map.get(g) }])));
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

  articles(clientId: string, guids: string[]): Promise<Article[]> {
    const map = this.of(this.articleMap, clientId);
    return Promise.resolve(guids.map((g) => map.get(g)).filter((a): a is Article => a !== undefined));
  }

  addFresh(clientId: string, entries: FreshEntry[], now: number): Promise<void> {
    this.freshMap.set(clientId, pruneFresh([...(this.freshMap.get(clientId) ?? []), ...entries], now, Math.max(now, Math.floor(Date.now() / 1000))));
    return Promise.resolve();
  }

  upsertArticle(clientId: string, meta: ArticleMeta, now: number, { revive = true } = {}): Promise<{ article: Article; created: boolean } | undefined> {
    if (!revive && this.deletedMap.get(clientId)?.has(articleGuid(meta.url))) return Promise.resolve(undefined);
    const map = this.of(this.articleMap, clientId);
    const previous = map.get(articleGuid(meta.url));
    const article = withMetadata(previous, meta, now);
    map.set(article.guid, article);
    this.deletedMap.get(clientId)?.delete(article.guid);
    this.version++;
    return Promise.resolve({ article, created: !previous });
  }

  deleteArticle(clientId: string, guid: string): Promise<boolean> {
    const map = this.of(this.articleMap, clientId);
    if (!map.delete(guid)) return Promise.resolve(false);
    this.of(this.covisitMap, clientId).delete(guid);
    this.freshMap.set(clientId, (this.freshMap.get(clientId) ?? []).filter((e) => e.guid !== guid));
    if (!this.deletedMap.has(clientId)) this.deletedMap.set(clientId, new Set());
    this.deletedMap.get(clientId)!.add(guid);
    this.version++;
    return Promise.resolve(true);
  }

  recordView(clientId: string, view: PageView, now: number): Promise<Article | undefined> {
    if (this.deletedMap.get(clientId)?.has(articleGuid(view.url))) return Promise.resolve(undefined);
    const map = this.of(this.articleMap, clientId);
    const article = mergeArticle(map.get(articleGuid(view.url)), view, now);
    map.set(article.guid, article);
    this.version++;
    return Promise.resolve(article);
  }

  putReader(clientId: string, reader: Reader): Promise<void> {
    this.of(this.readerMap, clientId).set(reader.userId, reader);
    return Promise.resolve();
  }

  recordViews(clientId: string, groups: ArticleViews[]): Promise<Array<Article | undefined>> {
    const map = this.of(this.articleMap, clientId);
    return Promise.resolve(groups.map((g) => {
      if (this.deletedMap.get(clientId)?.has(g.guid)) return undefined;
      const previous = map.get(g.guid);
      const base = withMetadata(previous, g.meta, g.times[0]);
      let hot = previous && previous.views > 0 ? previous.hot : undefined;
      for (const t of g.times) hot = addView(hot, t);
      const article = { ...base, lastSeen: Math.max(base.lastSeen, g.times[g.times.length - 1]), views: base.views + g.times.length, hot: hot! };
      map.set(g.guid, article);
      this.version++;
      return { ...article };
    }));
  }

  private readerVersions = new Map<string, number>();

  readers(clientId: string, userIds: string[]): Promise<Map<string, VersionedReader>> {
    const map = this.of(this.readerMap, clientId);
    return Promise.resolve(new Map(userIds.flatMap((id) => (map.has(id) ? [[id, { reader: map.get(id)!, version: this.readerVersions.get(`${clientId}\n${id}`) ?? 0 }] as const] : []))));
  }

  putReaders(clientId: string, writes: VersionedReader[]): Promise<string[]> {
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
    return Promise.resolve(conflicts);
  }

  addCovisitCounts(clientId: string, counts: Map<string, Record<string, number>>): Promise<void> {
    const map = this.of(this.covisitMap, clientId);
    for (const [guid, add] of counts) {
      const current = { ...(map.get(guid) ?? {}) };
      for (const [other, n] of Object.entries(add)) current[other] = (current[other] ?? 0) + n;
      map.set(guid, Object.keys(current).length > COVISIT_PRUNE_AT ? pruneCovisits(current) : current);
    }
    return Promise.resolve();
  }

  addCovisits(clientId: string, guid: string, others: Covisits): Promise<void> {
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
    return Promise.resolve();
  }

  putPreferences(clientId: string, preferences: Preferences): Promise<void> {
    this.of(this.preferenceMap, clientId).set(preferences.userId, preferences);
    return Promise.resolve();
  }

  recordClick(clientId: string, guid: string): Promise<Article | undefined> {
    const article = this.of(this.articleMap, clientId).get(guid);
    if (article) article.clicks++;
    return Promise.resolve(article);
  }
}
