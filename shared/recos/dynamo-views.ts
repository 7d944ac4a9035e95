/**
 * The page-view consumer's writes in the single table (`ViewBatchStore`), in a module of their own so only the
 * consumer's bundle carries them. Mostly one UpdateItem per article, reader and co-visit item of a batch, plus
 * conditional retries when concurrent batches race (docs/architecture.md).
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, batchWrite, ddb, isConditionFailure, runPool, tableName } from '../db/client.js';
import { hotSortKey, keys } from '../db/keys.js';
import { addCoReadCounts, articleFields, DAY, DELETED, fitPopular, isLive, popularItem, toFresh, MASS_PREFIX, READER_VERSION, recosItems, strip, toArticle, toCovisits, updateLiveArticle, updateParts, type Item } from './dynamo-items.js';
import { DynamoStore } from './dynamo-store.js';
import { scoreFromBuckets, viewIncrement } from './ranking.js';
import type { VersionedReader, ViewBatchStore } from './port.js';
import type { Article, FreshEntry, Reader } from './types.js';
import type { ArticleViews } from './types.js';
import { NEIGHBOUR_REFRESH_SECONDS, NEIGHBOURS_AT, strongestNeighbours } from './neighbours.js';
import { CANDIDATES } from './recommend.js';
import { POPULAR_SNAPSHOT_REFRESH_SECONDS } from './read-cache.js';
import { FRESH_AHEAD_SECONDS } from './settings.js';


/**
 * Sort key of the item beside the popular snapshot (keys.popularSnapshot) that says when a consumer last took the turn to
 * rewrite it: one writer per refresh period, whatever the containers. (Here, not in keys.ts: only the consumer's bundle
 * needs it, and the request functions' bundles are at their size bound.)
 */
export const POPULAR_SNAPSHOT_TURN = 'POPULARTURN';

/** Updates of one batch run this many calls at once. */
const CONCURRENCY = 16;

/** One per container: its copy of each client's popular list (what neighbour snapshots leave out) lives up to READ_CACHE_SECONDS. */
const shared = /* @__PURE__ */ new DynamoStore();

export class DynamoViewStore implements ViewBatchStore {
  private readonly store = shared;
  /** Per client, the articles counted by `recordViews` whose neighbour snapshot is due. */
  private readonly due = new Map<string, Set<string>>();
  /** Per client, when this container last tried to rewrite the popular snapshot (Unix seconds). */
  private readonly popularTried = new Map<string, number>();

  addFresh(clientId: string, entries: FreshEntry[], now: number): Promise<void> {
    return this.store.addFresh(clientId, entries, now);
  }

  /**
   * One UpdateItem per article (after one BatchGetItem per 100 articles):
   * ADD the views and per-bucket popularity masses, SET the latest metadata
   * and the index sort key computed from the stored masses plus this batch's.
   * Only when a concurrent batch changed the masses in between does the
   * returned article disagree with that key: then a second, conditional
   * update moves the key up to the article's (never down).
   */
  async recordViews(clientId: string, groups: ArticleViews[]): Promise<Array<Article | undefined | Error>> {
    const out = new Array<Article | undefined | Error>(groups.length);
    let previous: Map<string, Item>;
    try {
      previous = new Map((await batchGet<Item>(groups.map((g) => keys.article(clientId, g.guid)))).map((item) => [item.guid as string, item]));
    } catch (err) {
      return groups.map(() => err as Error);
    }
    await runPool(groups, CONCURRENCY, async (group, index) => {
      const before = previous.get(group.guid);
      if (before && !isLive(before)) {
        out[index] = undefined;
        return;
      }
      try {
        out[index] = await this.addViews(clientId, group, before);
      } catch (err) {
        out[index] = err instanceof Error ? err : new Error(String(err));
      }
    });
    return out;
  }

  private async addViews(clientId: string, group: ArticleViews, before: Item | undefined): Promise<Article | undefined> {
    const { guid, meta, times } = group;
    const first = times[0];
    const last = times[times.length - 1];
    const added: Record<number, number> = {};
    for (const t of times) {
      const { bucket, amount } = viewIncrement(t);
      added[bucket] = (added[bucket] ?? 0) + amount;
    }
    const masses: Record<number, number> = { ...added };
    for (const [name, value] of Object.entries(before ?? {})) {
      if (name.startsWith(MASS_PREFIX)) masses[Number(name.slice(MASS_PREFIX.length))] = (masses[Number(name.slice(MASS_PREFIX.length))] ?? 0) + Number(value);
    }
    const expectedKey = hotSortKey(scoreFromBuckets(masses) ?? 0);
    const { set, setIfAbsent } = articleFields(clientId, meta, first, last);
    // Its neighbour snapshot is due (by view time): rewritten after this batch's co-visits (refreshNeighbours).
    const snapshotDue = !(Number(before?.[NEIGHBOURS_AT] ?? -Infinity) > last - NEIGHBOUR_REFRESH_SECONDS);
    if (snapshotDue) set[NEIGHBOURS_AT] = last;
    const { names, values, parts } = updateParts({ ...set, lastSeen: last, gsi1pk: keys.articlesByHotness(clientId), gsi1sk: expectedKey }, setIfAbsent);
    const adds = [`#views :n`];
    values[':n'] = times.length;
    names['#views'] = 'views';
    Object.entries(added).forEach(([bucket, amount], i) => {
      names[`#m${i}`] = MASS_PREFIX + bucket;
      values[`:m${i}`] = amount;
      adds.push(`#m${i} :m${i}`);
    });
    const article = await updateLiveArticle(clientId, guid, `SET ${parts.join(', ')} ADD ${adds.join(', ')}`, names, values);
    if (!article) return undefined;
    if (snapshotDue) {
      const due = this.due.get(clientId) ?? new Set<string>();
      due.add(guid);
      this.due.set(clientId, due);
    }
    const key = hotSortKey(article.hot);
    if (key !== expectedKey) {
      try {
        await ddb.send(
          new UpdateCommand({
            TableName: tableName(),
            Key: keys.article(clientId, guid),
            UpdateExpression: 'SET gsi1sk = :k',
            ConditionExpression: 'attribute_not_exists(#deleted) AND (attribute_not_exists(gsi1sk) OR gsi1sk < :k)',
            ExpressionAttributeNames: { '#deleted': DELETED },
            ExpressionAttributeValues: { ':k': key },
          }),
        );
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
    }
    return article;
  }

  /**
   * The due neighbour snapshots of `clientId`: the co-visit items (BatchGetItem per 100) and this container's copy
   * of the popular list, then the chosen neighbours' articles (BatchGetItem per 100), then one BatchWriteItem per
   * 25 snapshots. Articles without co-visits get none.
   */
  async refreshNeighbours(clientId: string): Promise<number> {
    const due = [...(this.due.get(clientId) ?? [])];
    this.due.delete(clientId);
    if (due.length === 0) return 0;
    const [popular, covisitItems] = await Promise.all([this.store.hotArticles(clientId, CANDIDATES.popular, { cached: true }), batchGet<Item>(due.map((g) => keys.covisits(clientId, g)))]);
    const skip = new Set(popular.map((a) => a.guid));
    const picks = new Map<string, string[]>();
    for (const item of covisitItems) {
      const guid = (item.pk as string).slice(keys.articlePrefix(clientId).length);
      const chosen = strongestNeighbours(toCovisits(item), skip);
      if (chosen.length > 0) picks.set(guid, chosen);
    }
    if (picks.size === 0) return 0;
    // Read after this moment: a deletion before it shows as a tombstone here (see shared/recos/neighbours.ts).
    const at = Math.floor(Date.now() / 1000);
    const wanted = [...new Set([...picks.values()].flat())];
    const articles = new Map((await batchGet<Item>(wanted.map((g) => keys.article(clientId, g)))).filter(isLive).map((item) => [item.guid as string, toArticle(item)]));
    const snapshots = [...picks].map(([guid, chosen]) => recosItems.neighbours(clientId, guid, { at, articles: chosen.flatMap((g) => articles.get(g) ?? []) }));
    await batchWrite(snapshots.map((Item) => ({ PutRequest: { Item } })));
    return snapshots.length;
  }

  /**
   * The popular snapshot, at most once per `POPULAR_SNAPSHOT_REFRESH_SECONDS` per client whatever the containers: this
   * container skips a client it tried within the period; otherwise a conditional UpdateItem on a tiny turn item (the
   * snapshot's time) decides which consumer writes, and that one queries gsi1 (after noting the time: see read-cache.ts)
   * and puts the snapshot (≈ 100 KB for 200 articles). A failed conditional write costs a write unit of the tiny item,
   * not of the snapshot.
   */
  async refreshPopular(clientId: string): Promise<boolean> {
    const now = Math.floor(Date.now() / 1000);
    if ((this.popularTried.get(clientId) ?? -Infinity) > now - POPULAR_SNAPSHOT_REFRESH_SECONDS) return false;
    this.popularTried.set(clientId, now);
    try {
      await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: { ...keys.popularSnapshot(clientId), sk: POPULAR_SNAPSHOT_TURN },
          UpdateExpression: 'SET #at = :now, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(#at) OR #at <= :due',
          ExpressionAttributeNames: { '#at': 'at', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': now, ':due': now - POPULAR_SNAPSHOT_REFRESH_SECONDS, ':ttl': now + DAY },
        }),
      );
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
    // Read after `now` (the snapshot's time): the popular articles, then the newest fresh-list articles outside them.
    const [articles, freshItem] = await Promise.all([
      this.store.queryHot(clientId, CANDIDATES.popular),
      ddb.send(new GetCommand({ TableName: tableName(), Key: keys.freshArticles(clientId) })).then((out) => out.Item),
    ]);
    const popular = new Set(articles.map((a) => a.guid));
    const newest = (freshItem ? toFresh(freshItem) : [])
      .filter((e) => e.published <= now + FRESH_AHEAD_SECONDS && !popular.has(e.guid))
      .sort((a, b) => b.published - a.published || (a.guid < b.guid ? -1 : 1))
      .slice(0, CANDIDATES.fresh);
    const fresh = newest.length > 0 ? (await batchGet<Item>(newest.map((e) => keys.article(clientId, e.guid)))).filter(isLive).map(toArticle) : [];
    await ddb.send(new PutCommand({ TableName: tableName(), Item: popularItem(clientId, fitPopular({ at: now, limit: CANDIDATES.popular, articles, fresh })) }));
    return true;
  }

  /** BatchGetItem per 100 (strongly consistent), with each reader's version (`rv`; 0 for an item written before versions). */
  async readers(clientId: string, userIds: string[]): Promise<Map<string, VersionedReader>> {
    if (userIds.length === 0) return new Map();
    const items = await batchGet<Item>(userIds.map((id) => keys.reader(clientId, id)));
    return new Map(items.map((item) => [item.userId as string, { reader: strip<Reader>(item)!, version: Number(item[READER_VERSION] ?? 0) }]));
  }

  /**
   * One conditional PutItem per reader (16 at once): written only while the
   * stored version is the one read (or, for a new reader, while there is
   * none), as the next version. BatchWriteItem cannot carry the condition,
   * and without it a batch running at the same time overwrote a reader's
   * reads (docs/architecture.md "Readers and concurrent batches").
   */
  async putReaders(clientId: string, writes: VersionedReader[]): Promise<string[]> {
    const conflicts: string[] = [];
    await runPool(writes, CONCURRENCY, async ({ reader, version }) => {
      try {
        await ddb.send(
          new PutCommand({
            TableName: tableName(),
            Item: { ...recosItems.reader(clientId, reader), [READER_VERSION]: (version ?? 0) + 1 },
            ...(version === undefined
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : version === 0
                ? { ConditionExpression: 'attribute_not_exists(#rv)', ExpressionAttributeNames: { '#rv': READER_VERSION } }
                : { ConditionExpression: '#rv = :rv', ExpressionAttributeNames: { '#rv': READER_VERSION }, ExpressionAttributeValues: { ':rv': version } }),
          }),
        );
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        conflicts.push(reader.userId);
      }
    });
    return conflicts;
  }

  /**
   * One UpdateItem per article (ADD of every count, at most 100 per call), plus the rare pruning Put. An article's
   * calls run one after another (its items' pruning is conditional on the version: two of its own calls at once would
   * make each other's pruning give up), articles 16 at once.
   */
  async addCovisitCounts(clientId: string, counts: Map<string, Record<string, number>>): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    await runPool([...counts], CONCURRENCY, async ([guid, add]) => {
      const entries = Object.entries(add);
      for (let i = 0; i < entries.length; i += 100) await addCoReadCounts(clientId, guid, entries.slice(i, i + 100), now);
    });
  }
}
