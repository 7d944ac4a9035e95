/**
 * `GET /v1/articles`: the catalogue's pages, in a module of their own so that
 * the listing function's bundle carries neither the writes of catalogue.ts
 * nor the recommendation store.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { isLive, toArticle } from './dynamo-items.js';
import { InvalidRecosRequestError } from './errors.js';
import { ARTICLES_PAGE } from './schemas.js';
import type { Article } from './types.js';

/** A page of the catalogue index (gsi2), newest first; deleted articles (tombstones) left out, so a page may take up to 10 Queries. */
async function queryCatalogue(clientId: string, q: { category?: string; count: number; startKey?: Record<string, string> }): Promise<{ articles: Article[]; nextKey?: Record<string, string> }> {
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

/** An article as the API shows it. */
export function articleOutput(a: Article) {
  return { guid: a.guid, url: a.url, title: a.title, description: a.desc, image: a.image, category: a.category, themes: a.themes, published_time: a.published, views: a.views, clicks: a.clicks };
}

const encodeCursor = (key: Record<string, string>) => Buffer.from(JSON.stringify(key)).toString('base64url');

/** Reads a cursor back into a start key of this client's catalogue index, or a 400. */
function decodeCursor(cursor: string, clientId: string): Record<string, string> {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  const k = key as Record<string, unknown> | undefined;
  const ok =
    k !== null &&
    typeof k === 'object' &&
    !Array.isArray(k) &&
    Object.keys(k).sort().join() === 'gsi2pk,gsi2sk,pk,sk' &&
    Object.values(k).every((value) => typeof value === 'string') &&
    k.gsi2pk === keys.articlesByPublished(clientId) &&
    (k.pk as string).startsWith(keys.articlePrefix(clientId)) &&
    k.sk === keys.article(clientId, '').sk;
  if (!ok) throw new InvalidRecosRequestError('query.cursor: not a cursor of this catalogue (use the X-Next-Cursor of the previous page)');
  return k as Record<string, string>;
}

/** `GET /v1/articles`: a page of the catalogue, newest first (by publication time), optionally one category (exact match). */
export async function listArticles(clientId: string, q: { category?: string; count?: number; cursor?: string }) {
  const startKey = q.cursor ? decodeCursor(q.cursor, clientId) : undefined;
  const page = await queryCatalogue(clientId, { category: q.category, count: q.count ?? ARTICLES_PAGE.default, startKey });
  return { articles: page.articles.map(articleOutput), nextCursor: page.nextKey ? encodeCursor(page.nextKey) : undefined };
}
