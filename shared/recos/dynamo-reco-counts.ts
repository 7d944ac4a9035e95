/**
 * The daily recommendation counters in the single table (keys.recoCounts):
 * the page-view consumer adds to them (one UpdateItem ADD per block, variant
 * and day of a batch); the statistics routes read a client's date range (one
 * Query of its partition, paged).
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, queryAll, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { RecoCountGroup, RecoCountStore } from './reco-counts.js';

/** One stored counter item: a block's counts of one variant and UTC day. */
export interface DailyRecoCounts {
  day: string;
  blockKey: string;
  variant: string;
  served: number;
  impressions: number;
  clicks: number;
}

export const dynamoRecoCounts: RecoCountStore = {
  async addCounts(g: RecoCountGroup): Promise<void> {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.recoCounts(g.clientId, g.day, g.blockKey, g.variant),
        UpdateExpression: 'SET #day = :day, #block = :block, #variant = :variant ADD served :served, impressions :impressions, clicks :clicks',
        ExpressionAttributeNames: { '#day': 'day', '#block': 'blockKey', '#variant': 'variant' },
        ExpressionAttributeValues: { ':day': g.day, ':block': g.blockKey, ':variant': g.variant, ':served': g.served, ':impressions': g.impressions, ':clicks': g.clicks },
      }),
    );
  },
};

/** A client's counters from `from` to `to` (UTC days, both included), by day, block and variant. */
export async function readRecoCounts(clientId: string, from: string, to: string): Promise<DailyRecoCounts[]> {
  const items = await queryAll<Record<string, unknown>>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': keys.recoCountsPartition(clientId), ':from': `${from}#`, ':to': `${to}#\uffff` },
  });
  return items.map((i) => ({
    day: String(i.day),
    blockKey: String(i.blockKey),
    variant: String(i.variant),
    served: Number(i.served ?? 0),
    impressions: Number(i.impressions ?? 0),
    clicks: Number(i.clicks ?? 0),
  }));
}

/** How long a click is remembered for de-duplication (a later repeat of the same link counts again). */
export const CLICK_MEMORY_DAYS = 90;

/** The item that remembers one counted click: per answer (its own partition), sort key the article. */
const clickKey = (clientId: string, recommId: string, guid: string) => ({ pk: `RCLICK#${clientId}#${recommId}`, sk: guid });

/** Whether this is the first click of an answer's link to `guid` (one conditional PutItem); a repeat answers false. */
export async function firstClick(clientId: string, recommId: string, guid: string, nowSeconds: number): Promise<boolean> {
  try {
    await ddb.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...clickKey(clientId, recommId, guid), type: 'click', ttl: nowSeconds + CLICK_MEMORY_DAYS * 86_400 },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}
