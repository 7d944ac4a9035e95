import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, ddb, isConditionFailure, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { FRESH_LIST_CAP, LIMITS, pruneFresh } from './limits.js';
import type { RecosStore, SeedCoReads } from './port.js';
import { freshListable } from './settings.js';
import { withMetadata } from './tracking.js';
import type { Article, ArticleMeta, FreshEntry, Preferences, Reader } from './types.js';
import { DELETION_WINDOW, deletionWindows, POPULAR_SNAPSHOT_MAX_AGE_SECONDS, READ_CACHE_SECONDS, TtlCache } from './read-cache.js';
import type { Client } from '../clients/clients.js';
import {
  articleFields,
  DAY,
  DELETED,
  DELETED_PREFIX,
  forgetReaderItems,
  FRESH_PREFIX,
  fromNeighbourItem,
  fromPopularItem,
  isLive,
  recosItems,
  strip,
  toArticle,
  toCovisits,
  toFresh,
  updateParts,
  type Item,
} from './dynamo-items.js';

/**
 * The recommendation records in the single table: one call per operation (none when cached copies answer), except
 * deleteArticle (4, the deletion mark first), hotArticles' gsi1 Query when the popular snapshot is missing or old,
 * and UnprocessedKeys retries under throttling.
 */
export class DynamoStore implements RecosStore {
  /** Popular lists (the promise, so concurrent requests share one Query) of up to 100 clients (≈ 200 KB each). */
  private readonly hotCache = new TtlCache<Promise<Article[]>>(100, READ_CACHE_SECONDS * 1000);
  /** Articles by client and guid (≈ 1 KB each). */
  private readonly articleCache = new TtlCache<Article>(20_000, READ_CACHE_SECONDS * 1000);
  /** Fresh lists of up to 100 clients (≤ ≈ 25 KB each), with the version they were written at. */
  private readonly freshCache = new TtlCache<{ version: number; entries: FreshEntry[] }>(100, READ_CACHE_SECONDS * 1000);

  /** Empties this container's copies (the benchmark measures a request without them). */
  dropCaches(): void {
    this.hotCache.clear();
    this.articleCache.clear();
    this.freshCache.clear();
  }

  async context(
    clientId: string,
    q: { userId?: string; guid?: string; preferences?: boolean; covisits?: boolean; neighbours?: boolean; fresh?: boolean; deletions?: boolean; client?: boolean; cached?: boolean },
  ) {
    const windows = q.deletions ? deletionWindows(Math.floor(Date.now() / 1000)) : [];
    // With `cached`, a copy of the fresh list answers while the client's fresh-list version still matches it (only the tiny version item is read).
    const freshCopy = q.fresh && q.cached ? this.freshCache.get(clientId) : undefined;
    const wanted = [
      q.userId && keys.reader(clientId, q.userId),
      q.userId && q.preferences && keys.readerPreferences(clientId, q.userId),
      q.guid && keys.article(clientId, q.guid),
      q.guid && q.covisits && keys.covisits(clientId, q.guid),
      q.guid && q.neighbours && keys.neighbours(clientId, q.guid),
      q.fresh && !freshCopy && keys.freshArticles(clientId),
      q.fresh && q.cached && keys.freshVersion(clientId),
      ...windows.map((w) => keys.articleDeletions(clientId, w)),
      q.client && keys.client(clientId),
    ].filter((k): k is { pk: string; sk: string } => Boolean(k));
    const items = wanted.length > 0 ? await batchGet<Item>(wanted) : [];
    const bySk = new Map(items.map((item) => [item.sk as string, item]));
    const covisitItem = bySk.get('COVISIT');
    const neighbourItem = bySk.get('NEIGH');
    const deleted = new Set<string>();
    for (const w of windows) for (const name of Object.keys(bySk.get(keys.articleDeletions(clientId, w).sk) ?? {})) if (name.startsWith(DELETED_PREFIX)) deleted.add(name.slice(DELETED_PREFIX.length));
    let fresh: FreshEntry[] | undefined;
    if (q.fresh) {
      const version = Number(bySk.get('FRESHVER')?.v ?? 0);
      let freshItem = bySk.get('FRESH');
      if (freshCopy && freshCopy.version === version) fresh = freshCopy.entries;
      else {
        // The copy is behind (a fresh-list addition since it was read): read the list again (rare: once per addition per container).
        if (!freshItem && freshCopy) freshItem = (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.freshArticles(clientId), ConsistentRead: true }))).Item;
        fresh = freshItem ? toFresh(freshItem) : [];
        // The copy's version is the one written with its entries (the list item's own `v`), not the version item's, which is bumped after it.
        if (q.cached) this.freshCache.set(clientId, { version: Number(freshItem?.v ?? 0), entries: fresh });
      }
    }
    return {
      client: bySk.get(keys.client(clientId).sk) as Client | undefined,
      deleted: q.deletions ? deleted : undefined,
      reader: strip<Reader>(bySk.get('READS')),
      preferences: strip<Preferences>(bySk.get('PREFS')),
      article: isLive(bySk.get('ART')) ? toArticle(bySk.get('ART')!) : undefined,
      covisits: covisitItem ? toCovisits(covisitItem) : undefined,
      neighbours: neighbourItem ? fromNeighbourItem(neighbourItem) : undefined,
      fresh,
    };
  }

  /** One BatchGetItem: the articles' co-read items and neighbour snapshots. */
  async coReads(clientId: string, guids: string[]): Promise<Map<string, SeedCoReads>> {
    const out = new Map<string, SeedCoReads>();
    if (guids.length === 0) return out;
    const items = await batchGet<Item>(guids.flatMap((g) => [keys.covisits(clientId, g), keys.neighbours(clientId, g)]));
    const prefix = keys.articlePrefix(clientId);
    for (const item of items) {
      const guid = (item.pk as string).slice(prefix.length);
      const entry = out.get(guid) ?? {};
      if (item.sk === 'COVISIT') entry.covisits = toCovisits(item);
      else entry.neighbours = fromNeighbourItem(item);
      out.set(guid, entry);
    }
    return out;
  }

  async hotArticles(clientId: string, limit: number, { cached = false }: { cached?: boolean; now?: number } = {}): Promise<Article[]> {
    if (!cached) return this.queryHot(clientId, limit);
    const key = `${clientId}\n${limit}`;
    let list = this.hotCache.get(key);
    if (!list) {
      list = this.snapshotOrQuery(clientId, limit);
      this.hotCache.set(key, list);
      // An empty list (a client's first traffic) is not kept: its first views show at the next request, not a minute later.
      list.then((articles) => articles.length === 0 && this.hotCache.delete(key)).catch(() => this.hotCache.delete(key));
    }
    return list;
  }

  /**
   * A container's first popular list of a client: the consumer's popular snapshot while it is young enough and holds
   * `limit` articles (or all there were), else the gsi1 Query (a client without recent views). The snapshot's fresh
   * articles are kept as this container's article copies.
   */
  private async snapshotOrQuery(clientId: string, limit: number): Promise<Article[]> {
    const snapshot = fromPopularItem((await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.popularSnapshot(clientId) }))).Item);
    const age = snapshot ? Math.floor(Date.now() / 1000) - snapshot.at : Infinity;
    if (!snapshot || age < 0 || age >= POPULAR_SNAPSHOT_MAX_AGE_SECONDS || (snapshot.limit < limit && snapshot.articles.length >= snapshot.limit)) return this.queryHot(clientId, limit);
    // Its fresh articles become this container's copies (the request's fresh candidates, read next otherwise; deleted ones never come from them).
    for (const article of snapshot.fresh) this.articleCache.set(`${clientId}\n${article.guid}`, article);
    return snapshot.articles.slice(0, limit);
  }

  /** The `limit` most popular articles, from gsi1 (eventually consistent). */
  async queryHot(clientId: string, limit: number): Promise<Article[]> {
    const out = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.articlesByHotness(clientId) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map(toArticle);
  }

  async articles(clientId: string, guids: string[], { cached = false, uncached }: { cached?: boolean; uncached?: Set<string> } = {}): Promise<Article[]> {
    if (guids.length === 0) return [];
    if (!cached) return (await batchGet<Item>(guids.map((g) => keys.article(clientId, g)))).filter(isLive).map(toArticle);
    const found = new Map<string, Article>();
    const missing: string[] = [];
    for (const guid of guids) {
      const copy = uncached?.has(guid) ? undefined : this.articleCache.get(`${clientId}\n${guid}`);
      if (copy) found.set(guid, copy);
      else missing.push(guid);
    }
    if (missing.length > 0) {
      const items = await batchGet<Item>(missing.map((g) => keys.article(clientId, g)));
      for (const item of items) {
        if (!isLive(item)) continue;
        const article = toArticle(item);
        found.set(article.guid, article);
        this.articleCache.set(`${clientId}\n${article.guid}`, article);
      }
    }
    return guids.map((g) => found.get(g)).filter((a): a is Article => a !== undefined);
  }

  async addFresh(clientId: string, entries: FreshEntry[], now: number): Promise<void> {
    if (entries.length === 0) return;
    const names = Object.fromEntries(entries.map((e, i) => [`#f${i}`, FRESH_PREFIX + e.guid]));
    const values = Object.fromEntries(entries.map((e, i) => [`:f${i}`, e.published]));
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.freshArticles(clientId),
        UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :f${i}`).join(', ')}, #type = :type ADD #v :one`,
        ExpressionAttributeNames: { ...names, '#type': 'type', '#v': 'v' },
        ExpressionAttributeValues: { ...values, ':type': 'fresh', ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    // Then the version item that requests read instead of the list while their container's copy matches it (shared/recos/read-cache.ts).
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.freshVersion(clientId),
        UpdateExpression: 'SET #type = :type ADD #v :one',
        ExpressionAttributeNames: { '#type': 'type', '#v': 'v' },
        ExpressionAttributeValues: { ':type': 'fresh-version', ':one': 1 },
      }),
    );
    const all = toFresh(out.Attributes ?? {});
    // "Dated ahead" is judged against the later of `now` and this moment: a late batch of page views (dated by its views,
    // hours old after a redelivery, or applied after newer batches) must not take the entries of articles published since
    // for ones dated ahead and remove them (they would not come back: only an article's first view adds it).
    const latest = Math.max(now, Math.floor(Date.now() / 1000));
    // Rare: past the cap (or with entries outside the longest window), the rest is removed. A guid re-added meanwhile may go; its next upsert puts it back.
    if (all.length > FRESH_LIST_CAP + 100 || all.some((e) => !freshListable(e.published, now, latest))) {
      const keep = new Set(pruneFresh(all, now, latest).map((e) => e.guid));
      const drop = all.filter((e) => !keep.has(e.guid)).slice(0, 500);
      if (drop.length > 0) {
        await ddb.send(
          new UpdateCommand({
            TableName: tableName(),
            Key: keys.freshArticles(clientId),
            UpdateExpression: `REMOVE ${drop.map((_, i) => `#d${i}`).join(', ')}`,
            ExpressionAttributeNames: Object.fromEntries(drop.map((e, i) => [`#d${i}`, FRESH_PREFIX + e.guid])),
          }),
        );
      }
    }
  }

  /**
   * A page of the client's catalogue, newest first, optionally of one
   * category (a filter: a page may take several reads, at most 10).
   */
  async upsertArticle(clientId: string, meta: ArticleMeta, now: number, { revive = true } = {}): Promise<{ article: Article; created: boolean } | undefined> {
    const { guid, set, setIfAbsent } = articleFields(clientId, meta, now, now);
    const update = updateParts(set, { ...setIfAbsent, lastSeen: now, views: 0 });
    let out;
    try {
      out = await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.article(clientId, guid),
          UpdateExpression: `SET ${update.parts.join(', ')} REMOVE #deleted`,
          ...(revive ? {} : { ConditionExpression: 'attribute_not_exists(#deleted)' }),
          ExpressionAttributeNames: { ...update.names, '#deleted': DELETED },
          ExpressionAttributeValues: update.values,
          ReturnValues: 'ALL_OLD',
        }),
      );
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
    const old = out.Attributes;
    const created = !isLive(old);
    const article = withMetadata(created ? undefined : toArticle(old), meta, now);
    return { article, created };
  }

  async deleteArticle(clientId: string, guid: string): Promise<boolean> {
    const now = Math.floor(Date.now() / 1000);
    // First the mark that requests read (the current deletion window), so no container's cached copy is served once
    // the tombstone is there, even when a later step fails. Unknown articles get a mark too (harmless: nothing to hide).
    const [window] = deletionWindows(now);
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.articleDeletions(clientId, window),
        UpdateExpression: 'SET #g = :now, #type = :type, #ttl = :ttl',
        ExpressionAttributeNames: { '#g': DELETED_PREFIX + guid, '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': now, ':type': 'deletions', ':ttl': window + 2 * DELETION_WINDOW + DAY },
      }),
    );
    let found = true;
    try {
      // The tombstone replaces the whole item: counters, popularity and index keys go.
      await ddb.send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.article(clientId, guid), type: 'article', guid, [DELETED]: now, ttl: now + LIMITS.articleTtlDays * DAY },
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#deleted)',
          ExpressionAttributeNames: { '#deleted': DELETED },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Unknown: nothing to do. Already a tombstone: the clean-up below is done again (idempotent), so a retry after a fault between the two rounds finishes it.
      if (!(err as { Item?: Record<string, unknown> }).Item?.[DELETED]) return false;
      found = false;
    }
    await Promise.all([
      ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.covisits(clientId, guid) })),
      ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.neighbours(clientId, guid) })),
      ddb.send(new UpdateCommand({ TableName: tableName(), Key: keys.freshArticles(clientId), UpdateExpression: 'REMOVE #g', ExpressionAttributeNames: { '#g': FRESH_PREFIX + guid } })),
    ]);
    return found;
  }

  async putPreferences(clientId: string, preferences: Preferences): Promise<void> {
    await ddb.send(new PutCommand({ TableName: tableName(), Item: recosItems.preferences(clientId, preferences) }));
  }

  async getPreferences(clientId: string, userId: string): Promise<Preferences | undefined> {
    const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.readerPreferences(clientId, userId) }));
    return strip<Preferences>(out.Item);
  }

  /** Deletes the reader and preference items of these user ids (BatchWriteItem, 25 per call). */
  forgetReaders(clientId: string, userIds: string[]): Promise<void> {
    return forgetReaderItems(clientId, userIds);
  }

  async recordClick(clientId: string, guid: string): Promise<Article | undefined> {
    try {
      const out = await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.article(clientId, guid),
          UpdateExpression: 'ADD clicks :one',
          // Not a tombstone (a DELETE between the redirect's read and this write): a revival starts at 0 clicks.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#deleted)',
          ExpressionAttributeNames: { '#deleted': DELETED },
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toArticle(out.Attributes ?? {});
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
  }
}
