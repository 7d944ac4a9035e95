import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { detectMediaType, fileName } from '../../shared/imports/create.js';
import { detectDelimiter, ImportFailure, MAX_ROW_BYTES, readCsv, readHeader, recordToLine, validEmailOf } from '../../shared/imports/csv.js';
import { addFirstErrors, clip, MAX_REPORTED_ERRORS, MAX_REPORTED_ERRORS_BYTES } from '../../shared/imports/files.js';
import type { ReportError } from '../../shared/subscribers/types.js';
import { fileOfKey, resumeKey, sourceKey } from '../../shared/imports/objects.js';
import { asyncIterable } from '../helpers/async-iterable.js';

async function records(...chunks: Array<string | Buffer>) {
  const source = () => asyncIterable(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c)));
  const out: Array<{ line: number; cells: string[] }> = [];
  for await (const r of readCsv(source())) out.push(r);
  return out;
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('detectDelimiter', () => {
  it('takes ; when the header has more semicolons than commas, outside quotes', () => {
    expect(detectDelimiter('email,subscribed,guid')).toBe(',');
    expect(detectDelimiter('email;subscribed;guid')).toBe(';');
    expect(detectDelimiter('"a,b,c";email;guid')).toBe(';');
    expect(detectDelimiter('"a;b;c",email')).toBe(',');
    expect(detectDelimiter('email')).toBe(',');
  });
});

describe('readHeader', () => {
  it('maps known columns in any case and keeps data_ names after the prefix', () => {
    expect(readHeader([' EMAIL ', 'Subscribed', 'Unsubscribed_Cause', 'GUID', 'Data_FirstName', 'open_tracking_CONSENT', 'other', 'data_'])).toEqual([
      'email',
      'subscribed',
      'unsubscribed_cause',
      'guid',
      'data_FirstName',
      'open_tracking_consent',
      undefined,
      undefined,
    ]);
  });

  it('fails the import without an email column, naming the columns found', () => {
    expect(() => readHeader(['mail', 'subscribed'])).toThrow(ImportFailure);
    expect(() => readHeader(['mail', 'subscribed'])).toThrow(/no email column.*"mail", "subscribed"/);
  });

  it('uses the first of two columns with the same name', () => {
    expect(readHeader(['email', 'Email'])).toEqual(['email', undefined]);
  });
});

describe('recordToLine (spec 2.8)', () => {
  const columns = readHeader(['email', 'subscribed', 'unsubscribed_cause', 'guid', 'data_city', 'open_tracking_consent']);

  it('defaults guid to the md5 of the lower-cased email and carries the opId', () => {
    const line = recordToLine(columns, [' Ann@Example.COM ', '', '', '', '', ''], 7, 'import#3#7');
    expect(line).toEqual({ line: 7, email: 'ann@example.com', guid: md5('ann@example.com'), opId: 'import#3#7', subscribed: undefined, unsubscribedCause: undefined, data: undefined, openTrackingConsent: undefined });
  });

  it('reads subscribed true/false in any case and treats other values as absent', () => {
    const sub = (value: string) => (recordToLine(columns, ['a@b.co', value], 2, 'x') as { subscribed?: boolean }).subscribed;
    expect(sub('TRUE')).toBe(true);
    expect(sub('false')).toBe(false);
    expect(sub('yes')).toBeUndefined();
    expect(sub('1')).toBeUndefined();
    expect(sub('')).toBeUndefined();
  });

  it('keeps guid, cause, data_* and consent as given; empty cells are absent', () => {
    const line = recordToLine(columns, ['a@b.co', 'false', 'publisher', 'G-1', 'Paris', 'True'], 2, 'x');
    expect(line).toMatchObject({ subscribed: false, unsubscribedCause: 'PUBLISHER', guid: 'G-1', data: { data_city: 'Paris' }, openTrackingConsent: true });
    const bare = recordToLine(columns, ['a@b.co', 'true', '', '', '', 'maybe'], 2, 'x');
    expect(bare).toMatchObject({ guid: md5('a@b.co'), data: undefined, openTrackingConsent: undefined });
  });

  it('rejects a missing or invalid email with its line', () => {
    expect(recordToLine(columns, ['', 'true'], 5, 'x')).toMatchObject({ line: 5, email: null, cause: expect.stringMatching(/email/) as string });
    expect(recordToLine(columns, ['not-an-email'], 6, 'x')).toMatchObject({ line: 6, email: 'not-an-email', cause: expect.stringMatching(/email/) as string });
    expect(recordToLine(columns, [], 8, 'x')).toMatchObject({ line: 8, cause: expect.stringMatching(/email/) as string });
  });

  it('gives the valid address of a rejected line, for update_list', () => {
    const rejected = recordToLine(columns, ['Ann@b.co', 'true', 'SOMEONE'], 3, 'x');
    expect(rejected).toMatchObject({ cause: expect.stringMatching(/unsubscribed_cause/) as string });
    expect(validEmailOf(rejected as never)).toBe('ann@b.co');
    expect(validEmailOf({ line: 1, email: 'nope', cause: '' })).toBeUndefined();
  });
});

describe('readCsv', () => {
  it('numbers records from the header (line 1), with BOM, CRLF, quotes and blank lines', async () => {
    const out = await records('\ufeffEmail;Subscribed\r\n"a@b.co";"true"\r\n\r\n"x;y@b.co";false\r\n');
    expect(out).toEqual([
      { line: 1, cells: ['Email', 'Subscribed'] },
      { line: 2, cells: ['a@b.co', 'true'] },
      { line: 3, cells: [] },
      { line: 4, cells: ['x;y@b.co', 'false'] },
    ]);
  });

  it('reads LF files, quoted delimiters and quotes, and a last line without newline', async () => {
    const out = await records('email,data_note\na@b.co,"one, ""two"""\nc@d.co,x');
    expect(out.map((r) => r.cells)).toEqual([
      ['email', 'data_note'],
      ['a@b.co', 'one, "two"'],
      ['c@d.co', 'x'],
    ]);
  });

  it('detects the delimiter even when the header arrives in pieces, and keeps split UTF-8 characters whole', async () => {
    const euro = Buffer.from('€', 'utf8');
    const out = await records('ema', 'il;data_', 'price\n', 'a@b.co;', euro.subarray(0, 1), Buffer.concat([euro.subarray(1), Buffer.from('5\n')]));
    expect(out.map((r) => r.cells)).toEqual([
      ['email', 'data_price'],
      ['a@b.co', '€5'],
    ]);
  });

  it('fails malformed CSV with an ImportFailure', async () => {
    await expect(records('email\n"a@b.co"x,\n')).rejects.toThrow(ImportFailure);
  });

  it('fails a record longer than MAX_ROW_BYTES (quoted line breaks included) with an ImportFailure naming its line', async () => {
    const big = 'y'.repeat(MAX_ROW_BYTES);
    await expect(records('email\nok@x.com\n"', big, '"\nok2@x.com\n')).rejects.toThrow(new ImportFailure(`line 3 is longer than ${MAX_ROW_BYTES} bytes; the import stops there`));
    const lines = Array.from({ length: 30_000 }, () => 'ab').join('\n');
    await expect(records(`email,data_n\nok@x.com,"${lines}"\n`)).rejects.toThrow(/line 2 is longer/);
    // Many records, each short: no limit.
    const many = Array.from({ length: 5000 }, (_, i) => `u${i}@x.com,${'z'.repeat(100)}`).join('\n');
    expect(await records(`email,data_n\n${many}\n`)).toHaveLength(5001);
    // A record of exactly the limit passes.
    expect(await records('email\n', 'a'.repeat(MAX_ROW_BYTES), '\n')).toHaveLength(2);
  });

  it('gives nothing for an empty file', async () => {
    expect(await records('')).toEqual([]);
  });
});

describe('imported file details', () => {
  it('takes the media type from a specific Content-Type, else sniffs', () => {
    expect(detectMediaType('text/csv; charset=utf-8', Buffer.from('email\n'), 'a.csv')).toEqual({ mediatype: 'text', subtype: 'csv' });
    expect(detectMediaType('application/vnd.ms-excel', Buffer.from('email\n'), 'a')).toEqual({ mediatype: 'application', subtype: 'vnd.ms-excel' });
    expect(detectMediaType(undefined, Buffer.from('email;guid\n'), 'x')).toEqual({ mediatype: 'text', subtype: 'csv' });
    expect(detectMediaType('application/octet-stream', Buffer.from('email\n'), 'list.CSV')).toEqual({ mediatype: 'text', subtype: 'csv' });
    expect(detectMediaType('application/octet-stream', Buffer.from('email\n'), 'list')).toEqual({ mediatype: 'text', subtype: 'plain' });
    expect(detectMediaType(undefined, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00]), 'x.csv')).toEqual({ mediatype: 'application', subtype: 'octet-stream' });
  });

  it('names the file after the last URL segment', () => {
    expect(fileName(new URL('https://h.example/exports/My%20List.csv?x=1'), 4)).toBe('My List.csv');
    expect(fileName(new URL('https://h.example/'), 4)).toBe('file-4');
  });

  it('finds the file of a stored object or a resume marker, nothing else', () => {
    expect(fileOfKey(sourceKey('acme-1', 12))).toEqual({ clientId: 'acme-1', fileId: 12 });
    expect(fileOfKey(resumeKey('acme-1', 12, 99))).toEqual({ clientId: 'acme-1', fileId: 12 });
    expect(fileOfKey('uploads/acme/12/other')).toBeUndefined();
    expect(fileOfKey('raw/acme/12/source')).toBeUndefined();
  });
});

describe('addFirstErrors', () => {
  it('clips each stored email and cause, and bounds the list in bytes and entries', () => {
    const kept: ReportError[] = [];
    const huge = 'q'.repeat(250_000);
    addFirstErrors(kept, [
      { line: 2, email: huge, cause: `invalid email ${huge}` },
      { line: 3, email: null, cause: 'missing email' },
    ]);
    expect(kept[0]).toEqual({ line: 2, email: `${'q'.repeat(254)}…`, cause: clip(`invalid email ${huge}`, 300) });
    expect(kept[0].cause).toHaveLength(301);
    expect(kept[1]).toEqual({ line: 3, email: null, cause: 'missing email' });
    for (let i = 0; i < 500; i++) addFirstErrors(kept, [{ line: 4 + i, email: huge, cause: huge }]);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(MAX_REPORTED_ERRORS_BYTES);
    expect(kept.length).toBeGreaterThan(10);
    expect(kept.map((e) => e.line)).toEqual(Array.from({ length: kept.length }, (_, i) => i + 2));
    const small: ReportError[] = [];
    for (let i = 0; i < 300; i++) addFirstErrors(small, [{ line: i, email: 'x', cause: 'y' }]);
    expect(small).toHaveLength(MAX_REPORTED_ERRORS);
  });
});
