import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { MAX_PUBLISHED_MILLISECONDS, MAX_PUBLISHED_SECONDS, MIN_PUBLISHED_SECONDS, PUBLISHED_RANGE_ISO, rangeProblem, readDate, toUnixSeconds } from '../../shared/recos/dates.js';
import { isoUtc, readFeedDate } from '../../shared/recos/feed-dates.js';
import { ArticleInputSchema } from '../../shared/recos/schemas.js';

/** `published_time` as the catalogue and tracking read it: the seconds, or the cause of the 400 / rejected line. */
function published(value: unknown): number | string | undefined {
  const result = v.safeParse(ArticleInputSchema, { url: 'https://dates.example/a', published_time: value });
  return result.success ? result.output.published_time : `${v.getDotPath(result.issues[0])}: ${result.issues[0].message}`;
}

const seconds = fc.integer({ min: 0, max: MAX_PUBLISHED_SECONDS });
/** Offsets in minutes east of UTC, ±23:59. */
const offsets = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 });

/** The instant written as local time at an offset (`2025-06-10T06:30:00+02:00`), with `Date` doing the arithmetic. */
function withOffset(t: number, minutes: number, { fraction = '', colon = true } = {}): string {
  const local = new Date((t + minutes * 60) * 1000).toISOString().slice(0, 19);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local}${fraction}${sign}${hh}${colon ? ':' : ''}${mm}`;
}

describe('published_time: the issue\'s dates', () => {
  it.each([
    // Before: Date.parse gave seconds above 10^11, which were then taken for milliseconds (1978-01-11, 1974, 2243).
    ['9999-12-31T00:00:00Z', 253_402_214_400],
    ['9999-12-31T23:59:59Z', MAX_PUBLISHED_SECONDS],
    ['6000-01-01T00:00:00Z', 127_174_492_800],
    ['1970-01-01T00:00:00Z', 0],
    ['1970-01-01T01:00:00+01:00', 0],
    ['2025-06-10T06:30:00.999+02:00', 1_749_529_800],
    ['2025-06-10', 1_749_513_600],
    [1_749_529_800, 1_749_529_800],
    ['1749529800', 1_749_529_800],
    [1_749_529_800_123, 1_749_529_800],
    [MAX_PUBLISHED_SECONDS, MAX_PUBLISHED_SECONDS],
    [MAX_PUBLISHED_MILLISECONDS, MAX_PUBLISHED_SECONDS],
  ])('%s is read exactly as %s', (value, expected) => {
    expect(published(value)).toBe(expected);
  });

  it.each([
    ['+275760-09-13T00:00:00Z', 'is after 9999-12-31T23:59:59Z'],
    ['10000-01-01T00:00:00Z', 'is not Unix seconds or an ISO 8601 date'],
    ['+010000-01-01T00:00:00Z', 'is after 9999-12-31T23:59:59Z'],
    ['9999-12-31T23:59:59-00:01', 'is after 9999-12-31T23:59:59Z'],
    ['1969-12-31T23:59:59Z', 'is before 1970-01-01T00:00:00Z'],
    ['1970-01-01T00:59:59+01:00', 'is before 1970-01-01T00:00:00Z'],
    ['-000001-01-01T00:00:00Z', 'is before 1970-01-01T00:00:00Z'],
    ['2025-02-29T00:00:00Z', 'is not a calendar date'],
    ['2025-06-10T24:00:00Z', 'is not a time of day (00:00:00 to 23:59:59)'],
    ['2025-06-10T10:00:00+24:00', 'has an offset beyond ±23:59'],
    ['yesterday', 'is not Unix seconds or an ISO 8601 date'],
    ['Tue, 10 Jun 2025 06:30:00 GMT', 'is not Unix seconds or an ISO 8601 date'],
    [1e19, 'is after 9999-12-31T23:59:59Z'],
    [MAX_PUBLISHED_MILLISECONDS + 1, 'is after 9999-12-31T23:59:59Z'],
    [-1, 'is before 1970-01-01T00:00:00Z'],
  ])('%s is a 400 that says why: %s', (value, problem) => {
    const cause = published(value);
    expect(cause).toBe(
      `published_time: must be Unix seconds or an ISO 8601 date from 1970 to 9999-12-31 (seconds 0 to 253402300799; milliseconds 253402300800 to 253402300799999): ${JSON.stringify(value)} ${problem}`,
    );
  });

  it('the range named in causes is the range of the constants', () => {
    expect(PUBLISHED_RANGE_ISO).toEqual({ min: isoUtc(MIN_PUBLISHED_SECONDS), max: isoUtc(MAX_PUBLISHED_SECONDS) });
  });

  it('an empty string is no date (the stored one is kept); text longer than 64 characters is refused', () => {
    expect(published('  ')).toBeUndefined();
    expect(published('2025-06-10T06:30:00.' + '1'.repeat(60) + 'Z')).toMatch(/^published_time: must be Unix seconds or an ISO 8601 date .*: is longer than 64 characters$/);
  });
});

describe('published_time: property tests against Date', () => {
  it('every second of the range reads back from Unix seconds, from Date.toISOString and from isoUtc', () => {
    fc.assert(
      fc.property(seconds, (t) => {
        const iso = new Date(t * 1000).toISOString();
        expect(isoUtc(t)).toBe(iso.replace('.000Z', 'Z'));
        expect(toUnixSeconds(t)).toBe(t);
        expect(toUnixSeconds(String(t))).toBe(t);
        expect(toUnixSeconds(iso)).toBe(t);
        expect(toUnixSeconds(isoUtc(t))).toBe(t);
      }),
      { numRuns: 2000 },
    );
  });

  it('ISO 8601 with any offset and fraction reads as Date.parse reads it (to the second)', () => {
    fc.assert(
      fc.property(seconds, offsets, fc.constantFrom('', '.5', '.999', '.000001'), fc.boolean(), (t, minutes, fraction, colon) => {
        // Local times after 9999-12-31 need the expanded year form, which has no offset form in Date: not generated.
        fc.pre(t + minutes * 60 <= MAX_PUBLISHED_SECONDS);
        const expected = Math.floor(Date.parse(withOffset(t, minutes, { fraction })) / 1000);
        const text = withOffset(t, minutes, { fraction, colon });
        expect(readDate(text)).toEqual({ seconds: expected });
        expect(toUnixSeconds(text)).toBe(rangeProblem(expected) === undefined ? expected : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it('milliseconds above the largest second read as their second', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_PUBLISHED_SECONDS + 1, max: MAX_PUBLISHED_MILLISECONDS }), (ms) => {
        expect(toUnixSeconds(ms)).toBe(Math.floor(new Date(ms).getTime() / 1000));
      }),
    );
  });

  it('instants outside the range that Date can show are recognised and refused, never folded into the range', () => {
    const outside = fc.oneof(fc.integer({ min: -8_640_000_000_000, max: -1 }), fc.integer({ min: MAX_PUBLISHED_SECONDS + 1, max: 8_640_000_000_000 }));
    fc.assert(
      fc.property(outside, (t) => {
        const iso = new Date(t * 1000).toISOString();
        expect(isoUtc(t)).toBe(iso.replace('.000Z', 'Z'));
        expect(readDate(iso)).toEqual({ seconds: t });
        expect(rangeProblem(t)).toBe(t < 0 ? 'is before 1970-01-01T00:00:00Z' : 'is after 9999-12-31T23:59:59Z');
        expect(toUnixSeconds(iso)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  it('any text either reads as an instant Date agrees with, or is refused; it never throws', () => {
    const dateish = fc.stringMatching(/^[0-9+\-:TZ .,]{0,30}$/);
    fc.assert(
      fc.property(fc.oneof(dateish, fc.string({ maxLength: 40 })), (text) => {
        const reading = readDate(text);
        if (!('seconds' in reading)) return;
        const trimmed = text.trim();
        if (/^\d{1,20}(\.\d{1,20})?$/.test(trimmed)) return;
        // Date.parse reads a time without an offset as local time: compare the same text at UTC.
        const utc = /T\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(trimmed) ? `${trimmed}Z` : trimmed;
        const parsed = Date.parse(utc);
        if (!Number.isNaN(parsed)) expect(reading.seconds).toBe(Math.floor(parsed / 1000));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('feed dates (RFC 822 as well)', () => {
  it.each([
    ['Tue, 10 Jun 2025 06:30:00 +0200', 1_749_529_800],
    ['Tue, 10 Jun 2025 04:30:00 GMT', 1_749_529_800],
    ['10 Jun 2025 06:30 CEST', 1_749_529_800],
    ['Tuesday, 10 June 2025 00:30:00 EDT (Eastern)', 1_749_529_800],
    ['Tue, 10 Jun 25 04:30:00 UT', 1_749_529_800],
    ['Fri, 31 Dec 9999 23:59:59 GMT', MAX_PUBLISHED_SECONDS],
  ])('%s is read', (text, expected) => {
    expect(readFeedDate(text)).toEqual({ seconds: expected });
  });

  it('an RFC 822 date outside the range is read as itself', () => {
    expect(readFeedDate('Wed, 31 Dec 1969 23:00:00 GMT')).toEqual({ seconds: -3600 });
    expect(readFeedDate('Tue, 10 Jun 2025 06:30:00 XYZ')).toEqual({ problem: 'has a zone (XYZ) that is not known' });
    expect(readFeedDate('31 Feb 2025 10:00 GMT')).toEqual({ problem: 'is not a calendar date' });
  });

  it('agrees with Date.parse on RFC 822 dates at numeric offsets', () => {
    fc.assert(
      fc.property(seconds, offsets, (t, minutes) => {
        const local = new Date((t + minutes * 60) * 1000);
        const abs = Math.abs(minutes);
        const text = `${local.toUTCString().replace(' GMT', '')} ${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
        if (local.getUTCFullYear() > 9999) return;
        expect(readFeedDate(text)).toEqual({ seconds: t });
      }),
      { numRuns: 1000 },
    );
  });
});
