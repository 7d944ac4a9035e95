/**
 * Today's event file from the hours the hourly job built plus the hours it
 * has not reached, against the S3 emulator (UploadPartCopy included: the
 * store here stitches with parts of 512 bytes, so small files are copied in
 * ranges as large files are in AWS). "Today" is a fixed day and the clock
 * is passed in, so the hours closed at each step do not depend on when the
 * test runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { invokeJob } from '../../infra/local/jobs.js';
import { assembleEvents } from '../../shared/events/assemble.js';
import type { CsvVariant } from '../../shared/events/csv.js';
import { getEventFile, type EventFile } from '../../shared/events/download.js';
import { eventPaths } from '../../shared/events/paths.js';
import { recordEvents } from '../../shared/events/record.js';
import { s3EventStore, type EventStore } from '../../shared/events/store.js';
import { EVENT_ID_FIELD, type EventRecord } from '../../shared/events/types.js';
import { jobList } from '../../shared/jobs.js';
import { newClient, request, useService } from '../helpers/service.js';

const service = useService();
const hourlyJob = jobList.find((j) => j.id === 'eventsAssembleHours')!;
const runHourly = (event: object) => invokeJob(hourlyJob, event) as Promise<{ built: Array<{ hours: string[]; rawObjectsRead: number }> }>;

const DAY = '2026-04-20';
const at = (hhmm: string, s = 0) => `${DAY}T${hhmm}:${String(s).padStart(2, '0')}.000Z`;

/** The S3 store with small parts, counting the raw objects read through it. */
function countingStore(): { store: EventStore; rawRead: () => string[] } {
  const inner = s3EventStore(undefined, { minPartBytes: 512 });
  const reads: string[] = [];
  const store: EventStore = {
    ...inner,
    read: (key, range) => {
      reads.push(key);
      return inner.read(key, range);
    },
  };
  return {
    store,
    rawRead: () => {
      const hours = [...new Set(reads.filter((k) => k.startsWith('raw/')).map((k) => k.split('/')[4]))].sort();
      reads.length = 0;
      return hours;
    },
  };
}

async function bytes(file: EventFile): Promise<string> {
  return 'url' in file ? (await fetch(file.url)).text() : file.body;
}

/** Clicks of one hour written as the service writes them: several raw objects, ties across them, a redelivered object, formula cells. */
async function recordHour(clientId: string, hh: string, n = 12) {
  const lines = (o: number): EventRecord[] =>
    Array.from({ length: n }, (_, i) => ({
      event: 'nl_click',
      date: at(`${hh}:${String((i * 7) % 60).padStart(2, '0')}`, o === 1 ? 30 : 0),
      email: `${o === 1 ? '=' : ''}r${hh}-${o}-${i}@x.io`,
      campaign_id: `c,${o}`,
      target_url: o === 1 ? '@SUM(A1)' : `https://x.io/${hh}/${i}?a="q"`,
      ...(o === 2 ? { [EVENT_ID_FIELD]: `n${hh}:${i}` } : {}),
    }));
  for (const o of [0, 1, 2, 2]) await recordEvents(clientId, lines(o));
}

/** The file a whole-day merge of the same raw objects gives (written as the closed day's file, read, then removed). */
async function wholeDay(store: EventStore, clientId: string, variant: CsvVariant): Promise<string> {
  const built = await assembleEvents(store, clientId, 'nl_click', DAY, { method: 'whole', variant, force: true });
  let text = '';
  for await (const chunk of await store.read(built.key!)) text += Buffer.from(chunk).toString('utf8');
  await store.remove([built.key!]);
  return text;
}

afterEach(() => {
  delete process.env.EVENTS_INLINE_MAX_BYTES;
});

describe("today's event file from the hours the job built", () => {
  it('is byte for byte the whole-day file in both variants, and the request reads only the raw objects of the current hour', async () => {
    const client = await newClient(service, { premiumEvents: true });
    for (const hh of ['00', '03', '09', '13', '14']) await recordHour(client.username, hh);
    const run = await runHourly({ time: at('14:05'), clients: [client.username] });
    expect(run.built).toEqual([expect.objectContaining({ hours: ['00', '03', '09', '13'], rawObjectsRead: 16 })]);

    const { store, rawRead } = countingStore();
    const now = new Date(at('14:20'));
    for (const variant of ['safe', 'raw'] as const) {
      const file = await getEventFile(store, client.username, 'nl_click', DAY, now, variant);
      expect(file.complete).toBe(false);
      expect(rawRead(), variant).toEqual(['14']);
      const served = await bytes(file);
      expect(served.split('\r\n')).toHaveLength(1 + 5 * 36 + 1);
      expect(served).toBe(await wholeDay(store, client.username, variant));
      rawRead();
    }
    expect((await bytes(await getEventFile(store, client.username, 'nl_click', DAY, now, 'safe'))).split('\r\n')[1]).toMatch(/^2026-04-20 00:00:00,r00-0-0@x\.io,"c,0",/);
    expect((await bytes(await getEventFile(store, client.username, 'nl_click', DAY, now, 'raw'))).split('\r\n')).toContain(`${DAY} 00:00:30,=r00-1-0@x.io,"c,1",,,,@SUM(A1),`);
    expect(rawRead()).toEqual([]);
    // Large: a presigned URL to the stitched file.
    process.env.EVENTS_INLINE_MAX_BYTES = '100';
    const large = await getEventFile(store, client.username, 'nl_click', DAY, now);
    expect('url' in large && large.url).toContain(eventPaths.partial(client.username, 'nl_click', DAY));
    expect(await bytes(large)).toBe(await wholeDay(store, client.username, 'safe'));
  });

  it('assembles the hours the job has not reached, and no other', async () => {
    const client = await newClient(service, { premiumEvents: true });
    for (const hh of ['08', '10', '11', '12', '13']) await recordHour(client.username, hh, 5);
    await runHourly({ time: at('12:05'), clients: [client.username] });
    const { store, rawRead } = countingStore();
    const file = await getEventFile(store, client.username, 'nl_click', DAY, new Date(at('13:02')));
    expect(rawRead()).toEqual(['12', '13']);
    expect(await bytes(file)).toBe(await wholeDay(store, client.username, 'safe'));
  });

  it('does not lose a late record of an hour already assembled: the request rebuilds that hour alone, the next run and the daily file keep it', async () => {
    const client = await newClient(service, { premiumEvents: true });
    for (const hh of ['04', '05', '06']) await recordHour(client.username, hh, 4);
    await runHourly({ time: at('07:05'), clients: [client.username] });
    const { store, rawRead } = countingStore();
    const now = new Date(at('07:30'));
    expect(await bytes(await getEventFile(store, client.username, 'nl_click', DAY, now))).not.toContain('late@x.io');
    expect(rawRead()).toEqual([]);

    await recordEvents(client.username, [{ event: 'nl_click', date: at('05:30', 1), email: 'late@x.io', target_url: 'https://x.io/late' }]);
    const served = await bytes(await getEventFile(store, client.username, 'nl_click', DAY, now));
    expect(rawRead()).toEqual(['05']);
    expect(served).toContain(`${DAY} 05:30:01,late@x.io`);
    expect(served).toBe(await wholeDay(store, client.username, 'safe'));
    expect(await bytes(await getEventFile(store, client.username, 'nl_click', DAY, now, 'raw'))).toContain('late@x.io');

    // The next run finds hour 05 up to date in both variants (the requests built them).
    expect((await runHourly({ time: at('08:05'), clients: [client.username] })).built).toEqual([]);
    // After midnight the day's file (assembled from the hours, read by the download as any closed day) has it too.
    const daily = (await invokeJob(jobList.find((j) => j.id === 'eventsAssemble')!, { date: DAY, clients: [client.username] })) as { files: Array<{ events: number; hoursBuilt: string[] }> };
    expect(daily.files).toEqual([
      expect.objectContaining({ events: 3 * 4 * 3 + 1, upToDate: false, hoursBuilt: [], raw: { key: eventPaths.file(client.username, 'nl_click', DAY, 'raw'), upToDate: false } }),
    ]);
    const closed = await request(`${service.url}/v1/newsletters/events/nl_click/${DAY}`, { token: client.token });
    expect(closed.headers.get('x-events-incomplete')).toBe('false');
    expect(closed.text).toBe(served);
    // The raw variant was built by the job too: the request reads no raw record.
    rawRead();
    const rawFile = await bytes(await getEventFile(store, client.username, 'nl_click', DAY, new Date('2026-04-21T12:00:00.000Z'), 'raw'));
    expect(rawRead()).toEqual([]);
    expect(rawFile).toContain('late@x.io');
    expect(rawFile).toBe(await wholeDay(store, client.username, 'raw'));
  });
});
