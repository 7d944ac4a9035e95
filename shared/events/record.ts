import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { s3 } from '../s3.js';
import type { EventName, EventRecord } from './types.js';

/** Key prefix of the raw records of one client, event and UTC day. */
export function rawPrefix(clientId: string, event: EventName, day: string): string {
  return `raw/${clientId}/${event}/${day}/`;
}

/**
 * Stores event records durably before the caller answers: one S3 object per
 * event type and UTC day per call (JSON lines), under
 * `raw/<client>/<event>/<YYYY-MM-DD>/`. The daily job assembles them.
 */
export async function recordEvents(clientId: string, records: EventRecord[]): Promise<void> {
  const groups = new Map<string, EventRecord[]>();
  for (const record of records) {
    const key = `${record.event}\u0000${record.date.slice(0, 10)}`;
    const group = groups.get(key);
    if (group) group.push(record);
    else groups.set(key, [record]);
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '');
  await Promise.all(
    [...groups.entries()].map(([key, group]) => {
      const [event, day] = key.split('\u0000') as [EventName, string];
      return s3.send(
        new PutObjectCommand({
          Bucket: config.eventsBucket,
          Key: `${rawPrefix(clientId, event, day)}${stamp}-${randomUUID()}.jsonl`,
          Body: group.map(({ event: _e, ...fields }) => JSON.stringify(fields)).join('\n') + '\n',
          ContentType: 'application/x-ndjson',
        }),
      );
    }),
  );
}
