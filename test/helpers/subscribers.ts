/** Test helpers for subscribers: a full recount of a list straight from the table, and raw event objects. */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { config } from '../../shared/config.js';
import { s3 } from '../../shared/s3.js';
import { recountList } from '../../bench/recount.js';

/** Counts the list's subscriber items one by one (what the counters must always equal): the benchmarks' recount. */
export const recount = recountList;

/** The raw event objects of a client and event (all days), each as its parsed JSON lines. */
export async function rawEventObjects(clientId: string, event: string): Promise<Array<Array<Record<string, unknown>>>> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.eventsBucket, Prefix: `raw/${clientId}/${event}/` }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const out = await s3.send(new GetObjectCommand({ Bucket: config.eventsBucket, Key }));
      const text = await out.Body!.transformToString();
      return text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    }),
  );
}
