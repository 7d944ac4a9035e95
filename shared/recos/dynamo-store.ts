import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, ddb, tableName } from '../db/client.js';
import { hotSortKey, keys } from '../db/keys.js';
import { COVISIT_CAP, COVISIT_PRUNE_AT, pruneCovisits, type RecosStore } from './store.js';
import { LIMITS } from './tracking.js';
import type { Article, Covisits, Preferences, Reader } from './types.js';

const DAY = 86_400;
/** Co-visit counts are attributes `n_<guid>` of the co-visit item (so one UpdateItem can ADD to several). */
const COUNT_PREFIX = 'n_';

type Item = Record<string, unknown>;

/** The table items of the recommendation records (also used to bulk-load the benchmark). */
export const recosItems = {
  article: (clientId: string, a: Article): Item => ({
    ...keys.article(clientId, a.guid),
    gsi1pk: keys.articlesByHotness(clientId),
    gsi1sk: hotSortKey(a.hot),
    type: 'article',
    ...a,
    ttl: a.lastSeen + LIMITS.articleTtlDays * DAY,
  }),
  reader: (clientId: string, r: Reader): Item => ({ ...keys.reader(clientId, r.userId), type: 'reader', ...r, ttl: r.lastSeen + LIMITS.readerTtlDays * DAY }),
  preferences: (clientId: string, p: Preferences): Item => ({ ...keys.readerPreferences(clientId, p.userId), type: 'preferences', ...p }),
  covisits: (clientId: string, guid: string, counts: Covisits, now: number): Item => ({
    ...keys.covisits(clientId, guid),
    type: 'covisit',
    ttl: now + LIMITS.articleTtlDays * DAY,
    ...Object.fromEntries(Object.entries(counts).map(([g, n]) => [COUNT_PREFIX + g, n])),
  }),
};

function toArticle(item: Item): Article {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, type: _t, ttl: _ttl, ...article } = item;
  return article as unknown as Article;
}

function toCovisits(item: Item): Covisits {
  const counts: Covisits = {};
  for (const [name, value] of Object.entries(item)) if (name.startsWith(COUNT_PREFIX)) counts[name.slice(COUNT_PREFIX.length)] = Number(value);
  return counts;
}

const strip = <T>(item: Item | undefined): T | undefined => {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, type: _t, ttl: _ttl, ...rest } = item;
  return rest as T;
};

/**
 * The recommendation records in the single table. Calls per operation:
 * context 1 (BatchGetItem), hotArticles 1 (Query on gsi1), articles 1
 * (BatchGetItem), putArticle 1, putReader 1, addCovisits 1 + one per other
 * article (UpdateItem, plus a rare pruning Put), recordClick 1.
 * UnprocessedKeys retries add calls under throttling.
 */
export class DynamoStore implements RecosStore {
  async context(clientId: string, q: { userId?: string; guid?: string; preferences?: boolean; covisits?: boolean }) {
    const wanted = [
      q.userId && keys.reader(clientId, q.userId),
      q.userId && q.preferences && keys.readerPreferences(clientId, q.userId),
      q.guid && keys.article(clientId, q.guid),
      q.guid && q.covisits && keys.covisits(clientId, q.guid),
    ].filter((k): k is { pk: string; sk: string } => Boolean(k));
    const items = wanted.length > 0 ? await batchGet<Item>(wanted) : [];
    const bySk = new Map(items.map((item) => [item.sk as string, item]));
    const covisitItem = bySk.get('COVISIT');
    return {
      reader: strip<Reader>(bySk.get('READS')),
      preferences: strip<Preferences>(bySk.get('PREFS')),
      article: bySk.has('ART') ? toArticle(bySk.get('ART')!) : undefined,
      covisits: covisitItem ? toCovisits(covisitItem) : undefined,
    };
  }

  async hotArticles(clientId: string, limit: number): Promise<Article[]> {
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

  async articles(clientId: string, guids: string[]): Promise<Article[]> {
    if (guids.length === 0) return [];
    return (await batchGet<Item>(guids.map((g) => keys.article(clientId, g)))).map(toArticle);
  }

  async putArticle(clientId: string, article: Article, previousViews: number | undefined): Promise<boolean> {
    try {
      await ddb.send(
        new PutCommand({
          TableName: tableName(),
          Item: recosItems.article(clientId, article),
          ...(previousViews === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: '#views = :prev', ExpressionAttributeNames: { '#views': 'views' }, ExpressionAttributeValues: { ':prev': previousViews } }),
        }),
      );
      return true;
    } catch (err) {
      if ((err as Error).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }

  async putReader(clientId: string, reader: Reader): Promise<void> {
    await ddb.send(new PutCommand({ TableName: tableName(), Item: recosItems.reader(clientId, reader) }));
  }

  async addCovisits(clientId: string, guid: string, others: string[]): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    await Promise.all([this.bump(clientId, guid, others, now), ...others.map((other) => this.bump(clientId, other, [guid], now))]);
  }

  private async bump(clientId: string, guid: string, others: string[], now: number): Promise<void> {
    const names = Object.fromEntries(others.map((g, i) => [`#c${i}`, COUNT_PREFIX + g]));
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.covisits(clientId, guid),
        UpdateExpression: `SET #type = :type, #ttl = :ttl ADD ${Object.keys(names).map((n) => `${n} :one`).join(', ')}`,
        ExpressionAttributeNames: { ...names, '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'covisit', ':ttl': now + LIMITS.articleTtlDays * DAY },
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

  async recordClick(clientId: string, guid: string): Promise<Article | undefined> {
    try {
      const out = await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.article(clientId, guid),
          UpdateExpression: 'ADD clicks :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toArticle(out.Attributes ?? {});
    } catch (err) {
      if ((err as Error).name === 'ConditionalCheckFailedException') return undefined;
      throw err;
    }
  }
}
