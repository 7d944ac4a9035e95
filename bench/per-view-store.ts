/**
 * One-by-one page-view writes on DynamoDB, bench:recos:tracking's baseline beside the oracle
 * (test/helpers/recos-oracle.ts); the service itself writes through the tracking queue.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, tableName } from '../shared/db/client.js';
import { hotSortKey, keys } from '../shared/db/keys.js';
import { addCoReadCounts, articleFields, DELETED, MASS_PREFIX, recosItems, updateLiveArticle, updateParts } from '../shared/recos/dynamo-items.js';
import { DynamoStore } from '../shared/recos/dynamo-store.js';
import { viewIncrement } from '../shared/recos/ranking.js';
import type { Article, Covisits, PageView, Reader } from '../shared/recos/types.js';
import { articleGuid } from '../shared/recos/urls.js';
import type { PerViewStore } from '../test/helpers/recos-oracle.js';

export class PerViewDynamoStore extends DynamoStore implements PerViewStore {
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

  private bump(clientId: string, guid: string, others: Covisits, now: number): Promise<void> {
    return addCoReadCounts(clientId, guid, Object.entries(others), now);
  }
}
