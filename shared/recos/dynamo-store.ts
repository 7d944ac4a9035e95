import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, batchWrite, ddb, isConditionFailure, tableName } from '../db/client.js';
import { hotSortKey, keys, publishedSortKey } from '../db/keys.js';
import { bucketsFromScore, scoreFromBuckets, viewIncrement } from './ranking.js';
import { COVISIT_CAP, COVISIT_PRUNE_AT, FRESH_LIST_CAP, pruneCovisits, pruneFresh, type RecosStore, type SeedCoReads } from './store.js';
import { freshListable } from './settings.js';
import { LIMITS, withMetadata, type ArticleMeta, type PageView } from './tracking.js';
import { articleGuid } from './urls.js';
import { DELETION_WINDOW, deletionWindows, READ_CACHE_SECONDS, TtlCache } from './read-cache.js';
import { NEIGHBOURS_AT, packNeighbours, unpackNeighbours, type NeighbourSnapshot } from './neighbours.js';
import type { Client } from '../clients/clients.js';
import type { Article, Covisits, FreshEntry, Preferences, Reader } from './types.js';

const DAY = 86_400;
/** Co-visit counts are attributes `n_<guid>` of the co-visit item (so one UpdateItem can ADD to several). */
export const COUNT_PREFIX = 'n_';
/** Fresh-list entries are attributes `p_<guid>` (publication time) of the client's fresh item. */
export const FRESH_PREFIX = 'p_';
/** Popularity bucket masses are attributes `m_<bucket>` of the article (see `viewIncrement`). */
export const MASS_PREFIX = 'm_';
/** The reader item's version (the page-view consumer writes a reader only at the version it read). */
export const READER_VERSION = 'rv';
/** Deleted articles are attributes `d_<guid>` (deletion time) of the client's deletion window items. */
const DELETED_PREFIX = 'd_';

type Item = Record<string, unknown>;

/** The table items of the recommendation records (also used to bulk-load the benchmark). */
export const recosItems = {
  article: (clientId: string, { hot, ...a }: Article): Item => ({
    ...keys.article(clientId, a.guid),
    ...(a.views > 0 ? { gsi1pk: keys.articlesByHotness(clientId), gsi1sk: hotSortKey(hot) } : {}),
    ...keys.articleByPublished(clientId, a.published, a.guid),
    type: 'article',
    ...a,
    ...Object.fromEntries(Object.entries(bucketsFromScore(hot)).map(([b, m]) => [MASS_PREFIX + b, m])),
    ttl: a.lastSeen + LIMITS.articleTtlDays * DAY,
  }),
  reader: (clientId: string, r: Reader): Item => ({ ...keys.reader(clientId, r.userId), type: 'reader', ...r, ttl: r.lastSeen + LIMITS.readerTtlDays * DAY }),
  preferences: (clientId: string, p: Preferences): Item => ({ ...keys.readerPreferences(clientId, p.userId), type: 'preferences', ...p }),
  fresh: (clientId: string, entries: FreshEntry[]): Item => ({ ...keys.freshArticles(clientId), type: 'fresh', ...Object.fromEntries(entries.map((e) => [FRESH_PREFIX + e.guid, e.published])) }),
  neighbours: (clientId: string, guid: string, snapshot: NeighbourSnapshot): Item => ({
    ...keys.neighbours(clientId, guid),
    type: 'neighbours',
    at: snapshot.at,
    a: packNeighbours(snapshot.articles),
    ttl: snapshot.at + DAY,
  }),
  covisits: (clientId: string, guid: string, counts: Covisits, now: number): Item => ({
    ...keys.covisits(clientId, guid),
    type: 'covisit',
    ttl: now + LIMITS.articleTtlDays * DAY,
    ...Object.fromEntries(Object.entries(counts).map(([g, n]) => [COUNT_PREFIX + g, n])),
  }),
};

/** A deleted article's item keeps only this mark (and its keys), so later views do not bring it back. */
export const DELETED = 'deletedAt';
export const isLive = (item: Item | undefined): item is Item => item !== undefined && !(DELETED in item);

export function toArticle(item: Item): Article {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, gsi2pk: _g3, gsi2sk: _g4, type: _t, ttl: _ttl, [NEIGHBOURS_AT]: _n, ...rest } = item;
  const masses: Record<number, number> = {};
  const article: Item = {};
  for (const [name, value] of Object.entries(rest)) {
    if (name.startsWith(MASS_PREFIX)) masses[Number(name.slice(MASS_PREFIX.length))] = Number(value);
    else article[name] = value;
  }
  return { ...(article as unknown as Article), hot: scoreFromBuckets(masses) ?? 0 };
}

function fromNeighbourItem(item: Item): NeighbourSnapshot | undefined {
  return typeof item.a === 'string' && typeof item.at === 'number' ? { at: item.at, articles: unpackNeighbours(item.a) } : undefined;
}

function toFresh(item: Item): FreshEntry[] {
  const entries: FreshEntry[] = [];
  for (const [name, value] of Object.entries(item)) if (name.startsWith(FRESH_PREFIX)) entries.push({ guid: name.slice(FRESH_PREFIX.length), published: Number(value) });
  return entries;
}

export function toCovisits(item: Item): Covisits {
  const counts: Covisits = {};
  for (const [name, value] of Object.entries(item)) if (name.startsWith(COUNT_PREFIX)) counts[name.slice(COUNT_PREFIX.length)] = Number(value);
  return counts;
}

/** `SET` clauses: `set` values always, `setIfAbsent` values only where the item has none. */
/**
 * Applies an update to an article unless it was deleted (tombstoned) and
 * returns it as stored after the update; undefined when it was deleted.
 */
export async function updateLiveArticle(
  clientId: string,
  guid: string,
  expression: string,
  names: Record<string, string>,
  values: Record<string, unknown>,
): Promise<Article | undefined> {
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.article(clientId, guid),
        UpdateExpression: expression,
        ConditionExpression: 'attribute_not_exists(#deleted)',
        ExpressionAttributeNames: { ...names, '#deleted': DELETED },
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toArticle(out.Attributes ?? {});
  } catch (err) {
    if (isConditionFailure(err)) return undefined; // deleted between the read and the update
    throw err;
  }
}

export function updateParts(set: Record<string, unknown>, setIfAbsent: Record<string, unknown>) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const parts: string[] = [];
  Object.keys({ ...setIfAbsent, ...set }).forEach((name, i) => {
    names[`#a${i}`] = name;
    values[`:a${i}`] = name in set ? set[name] : setIfAbsent[name];
    parts.push(name in set ? `#a${i} = :a${i}` : `#a${i} = if_not_exists(#a${i}, :a${i})`);
  });
  return { names, values, parts };
}

/**
 * The fields every article write sets (catalogue upsert, page view, a
 * batch of views): the URL, the given metadata (absent or empty fields keep
 * the stored ones), the listing index keys (gsi2, at the publication time)
 * and the expiry from `lastWrite`; and the defaults of a new article, first
 * seen at `firstSeen` (also its publication time when none is given).
 * Callers add their own fields (counters, popularity index keys).
 */
export function articleFields(clientId: string, meta: ArticleMeta, firstSeen: number, lastWrite: number) {
  const guid = articleGuid(meta.url);
  const given = { title: meta.title, desc: meta.desc, image: meta.image, category: meta.category, published: meta.published, themes: meta.themes?.length ? meta.themes.slice(0, LIMITS.themesPerArticle) : undefined };
  const set: Record<string, unknown> = { url: meta.url, guid, type: 'article', gsi2pk: keys.articlesByPublished(clientId), ttl: lastWrite + LIMITS.articleTtlDays * DAY };
  const setIfAbsent: Record<string, unknown> = { firstSeen, clicks: 0, title: '', desc: '', image: '', category: '', themes: [], published: firstSeen, dated: false, gsi2sk: publishedSortKey(firstSeen, guid) };
  for (const [name, value] of Object.entries(given)) if (value !== undefined && value !== '') set[name] = value;
  if (meta.published !== undefined) {
    set.gsi2sk = publishedSortKey(meta.published, guid);
    set.dated = true;
  }
  return { guid, set, setIfAbsent };
}

/** Deletes the reader and preference items of these user ids (BatchWriteItem, 25 per call); needs no store instance. */
export async function forgetReaderItems(clientId: string, userIds: string[]): Promise<void> {
  await batchWrite(userIds.flatMap((id) => [keys.reader(clientId, id), keys.readerPreferences(clientId, id)]).map((Key) => ({ DeleteRequest: { Key } })));
}

export const strip = <T>(item: Item | undefined): T | undefined => {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, type: _t, ttl: _ttl, [READER_VERSION]: _rv, ...rest } = item;
  return rest as T;
};

/**
 * The recommendation records in the single table. Calls per operation:
 * context 1 (BatchGetItem, with the fresh list, the deletion windows and the client),
 * hotArticles 1 (Query on gsi1; none while a cached list answers), articles
 * 1 (BatchGetItem; none when cached copies answer them all), upsertArticle 1,
 * addFresh 1 (+1 rare pruning), deleteArticle 4 (the deletion mark first), recordView 2 (UpdateItem ADD, then the index key), putReader 1, addCovisits 1 + one per other
 * article (UpdateItem, plus a rare pruning Put), recordClick 1.
 * UnprocessedKeys retries add calls under throttling.
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
      list = this.queryHot(clientId, limit);
      this.hotCache.set(key, list);
      // An empty list (a client's first traffic) is not kept: its first views show at the next request, not a minute later.
      list.then((articles) => articles.length === 0 && this.hotCache.delete(key)).catch(() => this.hotCache.delete(key));
    }
    return list;
  }

  private async queryHot(clientId: string, limit: number): Promise<Article[]> {
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
    // Rare: past the cap (or with entries outside the longest window), the rest is removed. A guid re-added meanwhile may go; its next upsert puts it back.
    if (all.length > FRESH_LIST_CAP + 100 || all.some((e) => !freshListable(e.published, now))) {
      const keep = new Set(pruneFresh(all, now).map((e) => e.guid));
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
  async listArticles(clientId: string, q: { category?: string; count: number; startKey?: Record<string, string> }): Promise<{ articles: Article[]; nextKey?: Record<string, string> }> {
    const articles: Article[] = [];
    let startKey = q.startKey;
    for (let round = 0; round < 10 && articles.length < q.count; round++) {
      const out = await ddb.send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk',
          ...(q.category !== undefined ? { FilterExpression: 'category = :c', ExpressionAttributeValues: { ':pk': keys.articlesByPublished(clientId), ':c': q.category } } : { ExpressionAttributeValues: { ':pk': keys.articlesByPublished(clientId) } }),
          ScanIndexForward: false,
          Limit: q.count - articles.length,
          ExclusiveStartKey: startKey,
        }),
      );
      articles.push(...(out.Items ?? []).filter(isLive).map(toArticle));
      startKey = out.LastEvaluatedKey as Record<string, string> | undefined;
      if (!startKey) break;
    }
    return { articles, nextKey: startKey };
  }

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

  async recordView(clientId: string, view: PageView, now: number): Promise<Article | undefined> {
    const { bucket, amount } = viewIncrement(now);
    const guid = articleGuid(view.url);
    const { userId: _reader, ...meta } = view;
    const { set, setIfAbsent } = articleFields(clientId, meta, now, now);
    const { names, values, parts } = updateParts({ ...set, lastSeen: now, gsi1pk: keys.articlesByHotness(clientId) }, setIfAbsent);
    values[':one'] = 1;
    values[':mass'] = amount;
    names['#views'] = 'views';
    names['#mass'] = MASS_PREFIX + bucket;
    const article = await updateLiveArticle(clientId, guid, `SET ${parts.join(', ')} ADD #views :one, #mass :mass`, names, values);
    if (!article) return undefined;
    // The index order only moves up: a concurrent view that computed a lower score does not overwrite a higher one.
    try {
      await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.article(clientId, article.guid),
          UpdateExpression: 'SET gsi1sk = :k',
          // Not on a tombstone (a DELETE between the view's two writes): it would carry a popularity key into a revival.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#deleted) AND (attribute_not_exists(gsi1sk) OR gsi1sk < :k)',
          ExpressionAttributeNames: { '#deleted': DELETED },
          ExpressionAttributeValues: { ':k': hotSortKey(article.hot) },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    return article;
  }

  async putReader(clientId: string, reader: Reader): Promise<void> {
    await ddb.send(new PutCommand({ TableName: tableName(), Item: recosItems.reader(clientId, reader) }));
  }

  async addCovisits(clientId: string, guid: string, others: Covisits): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    await Promise.all([this.bump(clientId, guid, others, now), ...Object.entries(others).map(([other, weight]) => this.bump(clientId, other, { [guid]: weight }, now))]);
  }

  private async bump(clientId: string, guid: string, others: Covisits, now: number): Promise<void> {
    const entries = Object.entries(others);
    const names = Object.fromEntries(entries.map(([g], i) => [`#c${i}`, COUNT_PREFIX + g]));
    const values = Object.fromEntries(entries.map(([, w], i) => [`:c${i}`, w]));
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.covisits(clientId, guid),
        UpdateExpression: `SET #type = :type, #ttl = :ttl ADD ${entries.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
        ExpressionAttributeNames: { ...names, '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ...values, ':type': 'covisit', ':ttl': now + LIMITS.articleTtlDays * DAY },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const counts = toCovisits(out.Attributes ?? {});
    if (Object.keys(counts).length > COVISIT_PRUNE_AT) {
      // Rare; increments racing with this rewrite are lost (counts are statistics).
      await ddb.send(new PutCommand({ TableName: tableName(), Item: recosItems.covisits(clientId, guid, pruneCovisits(counts, COVISIT_CAP), now) }));
    }
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
