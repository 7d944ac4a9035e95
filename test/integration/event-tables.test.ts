/**
 * The Glue table of the synthesized stack (infra/constructs/event-tables.ts)
 * against what the service really writes: events of every type the table's
 * `event` partition offers are produced through the real paths (subscriber
 * writes through the gateway, SES notifications through the ingester), the
 * raw objects are read back from the S3 emulator, and each key must be a
 * location the table's partition projection reaches, each object readable
 * with its serde and format (uncompressed JSON lines), each field a column
 * of a type that reads it; and a row as the table shows it equals the row
 * of the day's file the download endpoint assembles.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceStack } from '../../infra/service-stack.js';
import { config } from '../../shared/config.js';
import { csvDate, utcDay } from '../../shared/events/days.js';
import { dayHours } from '../../shared/events/paths.js';
import { eventColumns, eventNames } from '../../shared/events/types.js';
import { s3 } from '../../shared/s3.js';
import { sqsEvent } from '../fixtures/ses/fixtures.js';
import { foldNested, testApp } from '../helpers/cdk.js';
import { parseCsv } from '../helpers/csv.js';
import { newClient, request, useService, type TestClient } from '../helpers/service.js';
import { streamDrained } from '../helpers/subscribers.js';
import { ingestSes, sesNotification } from '../helpers/ses.js';

const service = useService();

interface GlueColumn {
  Name: string;
  Type: string;
}
interface GlueTableInput {
  Name: string;
  Parameters: Record<string, string | { 'Fn::Join': [string, unknown[]] }>;
  PartitionKeys: GlueColumn[];
  StorageDescriptor: {
    Location: { 'Fn::Join': [string, unknown[]] };
    InputFormat: string;
    OutputFormat: string;
    Compressed?: boolean;
    SerdeInfo: { SerializationLibrary: string; Parameters: Record<string, string> };
    Columns: GlueColumn[];
  };
}

let table: GlueTableInput;
beforeAll(() => {
  const resources = Object.values(foldNested(new ServiceStack(testApp(), 'Test')).Resources).filter((r) => r.Type === 'AWS::Glue::Table');
  expect(resources).toHaveLength(1);
  table = (resources[0].Properties as { TableInput: GlueTableInput }).TableInput;
}, 120_000);

/** A template string with the events bucket's Ref as this stack's (local) bucket. */
const resolved = (value: { 'Fn::Join': [string, unknown[]] } | string) =>
  typeof value === 'string'
    ? value
    : value['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : (expect(part).toEqual({ Ref: expect.stringMatching(/^Events[0-9A-F]{8}$/) as string }), config.eventsBucket))).join('');

/** Every key under the client's raw records, with its object's bytes and content encoding. */
async function rawObjectsOf(clientId: string) {
  await streamDrained();
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.eventsBucket, Prefix: `raw/${clientId}/` }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const out = await s3.send(new GetObjectCommand({ Bucket: config.eventsBucket, Key }));
      return { key: Key!, bytes: Buffer.from(await out.Body!.transformToByteArray()), contentEncoding: out.ContentEncoding };
    }),
  );
}

/** One event of each type the table offers, through the real paths; answers the client. */
async function everyEventType(): Promise<TestClient> {
  const a = await newClient(service, { premiumEvents: true });
  const subscribers = `${service.url}/v1/newsletters/lists/${a.defaultListId}/subscribers`;
  expect((await request(subscribers, { method: 'POST', token: a.token, body: [{ email: 'ann@x.co', guid: 'g-ann' }, { email: 'bob@x.co' }] })).status).toBe(200);
  expect((await request(subscribers, { method: 'POST', token: a.token, body: [{ email: 'bob@x.co', subscribed: false, unsubscribed_cause: 'PUBLISHER' }] })).status).toBe(200);
  const ses = (['send', 'open', 'click', 'bounce-permanent', 'complaint'] as const).map((name) => sesNotification(name, a, 'ann@x.co'));
  expect(await ingestSes(sqsEvent(ses))).toMatchObject({ events: 5, batchItemFailures: [] });
  return a;
}

describe('the Glue table over the event records', () => {
  it('reaches every raw object the service writes, reads it with its serde and shows every field it holds, as the download shows it', async () => {
    const a = await everyEventType();
    const objects = await rawObjectsOf(a.username);
    const params = Object.fromEntries(Object.entries(table.Parameters).map(([k, v]) => [k, resolved(v)]));
    const sd = table.StorageDescriptor;

    // The location and partitions: storage.location.template with each partition key's projection.
    expect(table.PartitionKeys.map((k) => k.Name)).toEqual(['client_id', 'event', 'day', 'hour']);
    expect(params['projection.enabled']).toBe('true');
    const template = params['storage.location.template'];
    const names = [...template.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]);
    expect(names).toEqual(table.PartitionKeys.map((k) => k.Name));
    const pattern = new RegExp(`^${template.replace(/[.*+?^()|[\]\\]/g, '\\$&').replace(/\$\{(\w+)\}/g, '(?<$1>[^/]+)')}[^/]+$`);
    expect(template.startsWith(resolved(sd.Location))).toBe(true);
    const [firstDay, lastDay] = params['projection.day.range'].split(',');
    // Every hour, not only this one, is spelled as the writers spell its folder (00-23): a query of hour 5 reads 05/.
    const [lo, hi] = params['projection.hour.range'].split(',').map(Number);
    expect([lo, hi]).toEqual([0, 23]);
    expect(dayHours.map((_, h) => String(h).padStart(Number(params['projection.hour.digits']), '0'))).toEqual(dayHours);
    const seen = new Set<string>();
    for (const { key } of objects) {
      const m = pattern.exec(`s3://${config.eventsBucket}/${key}`);
      expect(m, key).not.toBeNull();
      const { client_id, event, day, hour } = m!.groups!;
      expect(params['projection.client_id.type']).toBe('injected');
      expect(client_id).toBe(a.username);
      expect(params['projection.event.type']).toBe('enum');
      expect(params['projection.event.values'].split(','), key).toContain(event);
      expect([params['projection.day.type'], params['projection.day.format'], params['projection.day.interval'], params['projection.day.interval.unit']]).toEqual(['date', 'yyyy-MM-dd', '1', 'DAYS']);
      expect(day, key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(day >= firstDay && (lastDay === 'NOW' ? day <= utcDay(new Date()) : day <= lastDay), key).toBe(true);
      expect(params['projection.hour.type']).toBe('integer');
      expect(Number(hour) >= lo && Number(hour) <= hi && hour === String(Number(hour)).padStart(Number(params['projection.hour.digits']), '0'), key).toBe(true);
      seen.add(event);
    }
    // Every type the table offers was written (the events above cover them all), and nothing of another type.
    expect([...seen].sort()).toEqual(params['projection.event.values'].split(',').sort());
    expect([...seen].sort()).toEqual([...eventNames].sort());

    // The format: text, uncompressed, one JSON object per line, read by the OpenX JSON serde.
    expect([sd.InputFormat, sd.OutputFormat, sd.SerdeInfo.SerializationLibrary, params.classification]).toEqual([
      'org.apache.hadoop.mapred.TextInputFormat',
      'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
      'org.openx.data.jsonserde.JsonSerDe',
      'json',
    ]);
    expect(sd.Compressed ?? false).toBe(false);
    // No header to skip: a header-skip property would drop the first record of every object.
    expect(Object.keys({ ...params, ...sd.SerdeInfo.Parameters }).filter((k) => k.includes('skip.header') || k.includes('skip.footer'))).toEqual([]);
    const serde = sd.SerdeInfo.Parameters;
    expect(serde['case.insensitive']).toBe('false');
    /** The JSON field each column reads: its mapping, else its own name (case-sensitive). */
    const fieldOf = new Map(sd.Columns.map((c) => [serde[`mapping.${c.Name}`] ?? c.Name, c]));
    const partitionNames = new Set(table.PartitionKeys.map((k) => k.Name));
    /** Each object's lines as the table shows them: by event type, column name → value. */
    const rows = new Map<string, Array<Record<string, unknown>>>();
    for (const { key, bytes, contentEncoding } of objects) {
      // Athena decompresses by file extension only: a gzip body under .jsonl would be read as garbage.
      expect([key, contentEncoding ?? null, bytes.subarray(0, 2).toString('hex') === '1f8b']).toEqual([key, null, false]);
      expect(key, key).toMatch(/\.jsonl$/);
      const text = bytes.toString('utf8');
      expect(text.endsWith('\n'), key).toBe(true);
      const { event, day, hour } = pattern.exec(`s3://${config.eventsBucket}/${key}`)!.groups!;
      for (const line of text.slice(0, -1).split('\n')) {
        const record = JSON.parse(line) as Record<string, unknown>;
        expect(typeof record === 'object' && !Array.isArray(record), line).toBe(true);
        // The partition of a line is its own UTC day and hour: WHERE day = … finds the events of that day.
        expect([String(record.date).slice(0, 10), String(record.date).slice(11, 13)], key).toEqual([day, hour]);
        const row: Record<string, unknown> = {};
        for (const [field, value] of Object.entries(record)) {
          // Every field the service writes is a column (a field no column reads is lost to SQL), and none is a partition key's name.
          expect(fieldOf.has(field), `${event}: field ${field} is no column of the table`).toBe(true);
          expect(partitionNames.has(field), `${event}: field ${field}`).toBe(false);
          const column = fieldOf.get(field)!;
          // A value the column's type reads: scalars only; int columns hold integers (the serde parses digits in strings too).
          if (column.Type === 'int') expect(String(value), `${event}.${field}`).toMatch(/^-?\d+$/);
          else expect([column.Type, typeof value], `${event}.${field}`).toEqual(['string', expect.stringMatching(/^(string|number)$/)]);
          row[column.Name] = value;
        }
        rows.set(event, [...(rows.get(event) ?? []), row]);
      }
    }

    // A row of the table has the same values as the row of the day's file (as recorded: raw=true), column for column.
    for (const event of eventNames) {
      const reply = await request(`${service.url}/v1/newsletters/events/${event}/${utcDay(new Date())}?raw=true`, { token: a.token });
      expect(reply.status).toBe(200);
      const [header, ...lines] = await parseCsv(reply.text);
      expect(header).toEqual([...eventColumns[event]]);
      const columns = header.map((c) => fieldOf.get(c)?.Name);
      expect(columns.every(Boolean), `${event}: ${header.join(',')} / ${[...fieldOf.values()].map((c) => c.Name).join(',')}`).toBe(true);
      const asTable = (rows.get(event) ?? []).map((row) => columns.map((c, i) => (header[i] === 'date' ? csvDate(String(row[c!])) : row[c!] === undefined ? '' : String(row[c!]))));
      expect(asTable.length, event).toBeGreaterThan(0);
      expect([...asTable].sort(), event).toEqual([...lines].sort());
    }
  });
});
