/** Test helpers for subscribers: a full recount of a list straight from the table, and raw event objects. */
import { inject } from 'vitest';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { config } from '../../shared/config.js';
import { s3 } from '../../shared/s3.js';
import { recountList } from '../../shared/subscribers/recount.js';
import { countSubscribers as countNow } from '../../shared/subscribers/service.js';

/** Counts the list's subscriber items one by one (what the counters must always equal): the benchmarks' recount. */
export const recount = recountList;

/** The raw event objects of a client and event (all days), each as its parsed JSON lines, once the stream has drained. */
export async function rawEventObjects(clientId: string, event: string): Promise<Array<Array<Record<string, unknown>>>> {
  await streamDrained();
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.eventsBucket, Prefix: `raw/${clientId}/${event}/` }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const out = await s3.send(new GetObjectCommand({ Bucket: config.eventsBucket, Key }));
      const text = await out.Body!.transformToString();
      return text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    }),
  );
}

/**
 * Waits until the table stream's poller (global-setup.ts) has applied every write made so far: counts, day
 * statistics and subscriber events are exact from then on.
 */
export async function streamDrained(): Promise<void> {
  const res = await fetch(`${inject('streamPoller')}/_local/stream/drain`);
  if (!res.ok) throw new Error(`stream drain answered ${res.status}`);
}

/** A list's count (the service's countSubscribers) once the stream has drained. */
export async function countSubscribers(clientId: string, listId: number): ReturnType<typeof countNow> {
  await streamDrained();
  return countNow(clientId, listId);
}
