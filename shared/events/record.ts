import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { count } from '../observability/index.js';
import { s3 } from '../s3.js';
import { eventPaths } from './paths.js';
import type { EventRecord, RawEventName } from './types.js';

/**
 * Groups records by event and UTC hour; dates normalised to ISO 8601 UTC with
 * milliseconds and written first on each line; each group sorted by date
 * (stable), which lets the assembler stream-merge raw objects instead of
 * sorting whole days, and build a day hour by hour (hours are disjoint).
 */
export function groupRecords(records: EventRecord[]): Array<{ event: RawEventName; day: string; hour: string; lines: string[] }> {
  const groups = new Map<string, { event: RawEventName; day: string; hour: string; items: Array<{ at: number; line: string }> }>();
  for (const { event, date: given, ...fields } of records) {
    const at = Date.parse(given);
    if (Number.isNaN(at)) throw new Error(`Event record with an invalid date: ${given}`);
    const date = new Date(at).toISOString();
    const day = date.slice(0, 10);
    const hour = date.slice(11, 13);
    const id = `${event}\u0000${day}\u0000${hour}`;
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { event, day, hour, items: [] }));
    group.items.push({ at, line: JSON.stringify({ date, ...fields }) });
  }
  return [...groups.values()].map(({ event, day, hour, items }) => ({
    event,
    day,
    hour,
    lines: items.sort((a, b) => a.at - b.at).map((i) => i.line),
  }));
}

async function writeRaw(clientId: string, records: EventRecord[], name: () => string): Promise<void> {
  await Promise.all(
    groupRecords(records).map(({ event, day, hour, lines }) =>
      s3.send(
        new PutObjectCommand({
          Bucket: config.eventsBucket,
          Key: `${eventPaths.rawHour(clientId, event, day, hour)}${name()}.jsonl`,
          Body: lines.join('\n') + '\n',
          ContentType: 'application/x-ndjson',
        }),
      ),
    ),
  );
  count('EventsRecorded', records.length);
}

/**
 * Stores event records durably before the caller answers: one S3 object per
 * event type and UTC hour per call (JSON lines sorted by date), under
 * `raw/<client>/<event>/<YYYY-MM-DD>/<HH>/`. The hourly and daily jobs
 * assemble them.
 */
export async function recordEvents(clientId: string, records: EventRecord[]): Promise<void> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '');
  await writeRaw(clientId, records, () => `${stamp}-${randomUUID()}`);
}

/**
 * Like recordEvents, for a write that may be retried (the subscriber
 * service's opId retries; the SES ingester uses hidden line ids instead):
 * the object names derive from `deliveryId`, so a redelivery overwrites the
 * same objects with the same lines instead of adding duplicates.
 */
export async function recordEventsOnce(clientId: string, records: EventRecord[], deliveryId: string): Promise<void> {
  const safe = deliveryId.replace(/[^A-Za-z0-9_.-]/g, '_');
  await writeRaw(clientId, records, () => `d-${safe}`);
}
