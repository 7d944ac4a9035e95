/**
 * The recommendation records as single-table items: builders, attribute prefixes and readers, and the two article
 * writes shared by dynamo-store.ts (request paths) and dynamo-views.ts (the page-view consumer).
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, ddb, isConditionFailure, tableName } from '../db/client.js';
import { hotSortKey, keys, publishedSortKey } from '../db/keys.js';
import { COVISIT_CAP, COVISIT_PRUNE_AT, LIMITS, pruneCovisits } from './limits.js';
import { NEIGHBOURS_AT, packNeighbours, unpackNeighbours, type NeighbourSnapshot } from './neighbours.js';
import { bucketsFromScore, scoreFromBuckets } from './ranking.js';
import type { Article, ArticleMeta, Covisits, FreshEntry, Preferences, Reader } from './types.js';
import { articleGuid } from './urls.js';

export const DAY = 86_400;
/** Co-visit counts are attributes `n_<guid>` of the co-visit item (so one UpdateItem can ADD to several). */
export const COUNT_PREFIX = 'n_';
/** Fresh-list entries are attributes `p_<guid>` (publication time) of the client's fresh item. */
export const FRESH_PREFIX = 'p_';
/** Popularity bucket masses are attributes `m_<bucket>` of the article (see `viewIncrement`). */
export const MASS_PREFIX = 'm_';
/** The reader item's version (the page-view consumer writes a reader only at the version it read). */
export const READER_VERSION = 'rv';
/** Deleted articles are attributes `d_<guid>` (deletion time) of the client's deletion window items. */
export const DELETED_PREFIX = 'd_';

export type Item = Record<string, unknown>;

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

export function fromNeighbourItem(item: Item): NeighbourSnapshot | undefined {
  return typeof item.a === 'string' && typeof item.at === 'number' ? { at: item.at, articles: unpackNeighbours(item.a) } : undefined;
}

/**
 * The popular snapshot: the `limit` most popular articles (fewer when the
 * client had fewer), read from gsi1 after `at` (Unix seconds), and the
 * newest articles of the client's fresh list outside them (the fresh
 * candidates a request reads otherwise), read after `at` too.
 */
export interface PopularSnapshot {
  at: number;
  limit: number;
  articles: Article[];
  fresh: Article[];
}

/** A popular snapshot item stays this far below DynamoDB's 400 KB item limit (long descriptions: fewer articles, see `fitPopular`). */
export const POPULAR_SNAPSHOT_MAX_BYTES = 300_000;

/**
 * The snapshot as it fits in `POPULAR_SNAPSHOT_MAX_BYTES`: without its fresh
 * articles if need be, then with fewer popular ones (its `limit` lowered to
 * what it holds, so that a request for more queries the index instead).
 */
export function fitPopular(snapshot: PopularSnapshot): PopularSnapshot {
  const size = (s: PopularSnapshot) => packNeighbours(s.articles).length + packNeighbours(s.fresh).length;
  if (size(snapshot) <= POPULAR_SNAPSHOT_MAX_BYTES) return snapshot;
  let fitted: PopularSnapshot = { ...snapshot, fresh: [] };
  while (fitted.articles.length > 0 && size(fitted) > POPULAR_SNAPSHOT_MAX_BYTES) {
    const keep = Math.floor(fitted.articles.length * 0.9);
    fitted = { ...fitted, limit: keep, articles: fitted.articles.slice(0, keep) };
  }
  return fitted;
}

/** The popular snapshot's item (a function of its own, not in `recosItems`: only the consumer's bundle carries it). */
export const popularItem = (clientId: string, snapshot: PopularSnapshot): Item => ({
  ...keys.popularSnapshot(clientId),
  type: 'popular',
  at: snapshot.at,
  limit: snapshot.limit,
  a: packNeighbours(snapshot.articles),
  f: packNeighbours(snapshot.fresh),
  ttl: snapshot.at + DAY,
});

/** The snapshot of an item written by `popularItem` (undefined without one). */
export const fromPopularItem = (item: Item | undefined): PopularSnapshot | undefined =>
  item?.a ? { at: Number(item.at), limit: Number(item.limit), articles: unpackNeighbours(item.a as string), fresh: unpackNeighbours((item.f as string | undefined) ?? '[]') } : undefined;

export function toFresh(item: Item): FreshEntry[] {
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


/** The co-visit item's version: every ADD bumps it, and a pruning rewrite is written only at the version it read. */
export const COVISIT_VERSION = 'cv';

/**
 * ADDs co-read weights to an article's co-visit item (at most 100 per call: one UpdateExpression stays under 4 KB)
 * and prunes it to the COVISIT_CAP strongest past COVISIT_PRUNE_AT. The pruning rewrite is conditional on the version
 * (`cv`), so a concurrent batch's ADD is never lost: on conflict it re-reads and tries once more, else prunes later.
 */
export async function addCoReadCounts(clientId: string, guid: string, entries: Array<[string, number]>, now: number): Promise<void> {
  const names = Object.fromEntries(entries.map(([g], i) => [`#c${i}`, COUNT_PREFIX + g]));
  const values = Object.fromEntries(entries.map(([, n], i) => [`:c${i}`, n]));
  const out = await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.covisits(clientId, guid),
      UpdateExpression: `SET #type = :type, #ttl = :ttl ADD #cv :one, ${entries.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
      ExpressionAttributeNames: { ...names, '#type': 'type', '#ttl': 'ttl', '#cv': COVISIT_VERSION },
      ExpressionAttributeValues: { ...values, ':type': 'covisit', ':ttl': now + LIMITS.articleTtlDays * DAY, ':one': 1 },
      ReturnValues: 'ALL_NEW',
    }),
  );
  let item = out.Attributes ?? {};
  for (let attempt = 0; attempt < 2; attempt++) {
    const all = toCovisits(item);
    if (Object.keys(all).length <= COVISIT_PRUNE_AT) return;
    const version = Number(item[COVISIT_VERSION] ?? 0);
    try {
      await ddb.send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...recosItems.covisits(clientId, guid, pruneCovisits(all, COVISIT_CAP), now), [COVISIT_VERSION]: version + 1 },
          ConditionExpression: '#cv = :cv',
          ExpressionAttributeNames: { '#cv': COVISIT_VERSION },
          ExpressionAttributeValues: { ':cv': version },
        }),
      );
      return;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    if (attempt === 0) item = (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.covisits(clientId, guid), ConsistentRead: true }))).Item ?? {};
  }
}
