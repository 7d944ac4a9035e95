/**
 * Article dates (`published_time`: Unix seconds, milliseconds, ISO 8601) read exactly with integer day arithmetic
 * (Hinnant's civil calendar), not `Date.parse`: every instant from 1970 to 9999 reads as itself, and one outside
 * is refused, never folded in. Feeds also read RFC 822 (feed-dates.ts).
 */

/** Earliest published_time accepted: 1970-01-01T00:00:00Z in Unix seconds. */
export const MIN_PUBLISHED_SECONDS = 0;
/** Latest published_time accepted: 9999-12-31T23:59:59Z in Unix seconds. */
export const MAX_PUBLISHED_SECONDS = 253_402_300_799;
/**
 * A number above MAX_PUBLISHED_SECONDS is milliseconds, up to this value
 * (9999-12-31T23:59:59.999Z). A number is read as seconds whenever it can be
 * (so every second of the range can be sent as a number); milliseconds are
 * therefore read for instants from 1978-01-11T21:31:40.800Z on.
 */
export const MAX_PUBLISHED_MILLISECONDS = MAX_PUBLISHED_SECONDS * 1000 + 999;
/** Longest date text read (a longer one is not a date). */
export const MAX_DATE_CHARS = 64;

/** An instant in Unix seconds (possibly outside the accepted range), or why the text is not one. */
export type DateReading = { seconds: number } | { problem: string };

export const SECONDS_PER_DAY = 86_400;

/** Days from 1970-01-01 to the given proleptic Gregorian date (any year). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

const daysInMonth = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/** MIN_PUBLISHED_SECONDS and MAX_PUBLISHED_SECONDS in ISO 8601 (a unit test checks them against isoUtc). */
export const PUBLISHED_RANGE_ISO = { min: '1970-01-01T00:00:00Z', max: '9999-12-31T23:59:59Z' } as const;

/** Why `seconds` is outside 1970-01-01T00:00:00Z … 9999-12-31T23:59:59Z, or undefined when it is inside. */
export function rangeProblem(seconds: number): string | undefined {
  if (seconds < MIN_PUBLISHED_SECONDS) return `is before ${PUBLISHED_RANGE_ISO.min}`;
  if (seconds > MAX_PUBLISHED_SECONDS) return `is after ${PUBLISHED_RANGE_ISO.max}`;
  return undefined;
}

/** Seconds from a number: seconds up to MAX_PUBLISHED_SECONDS, milliseconds above (fractions dropped). */
function fromNumber(n: number): DateReading {
  if (!Number.isFinite(n)) return { problem: 'is not a finite number' };
  return { seconds: n > MAX_PUBLISHED_SECONDS ? Math.floor(n / 1000) : Math.floor(n) };
}

const NUMERIC = /^\d{1,20}(?:\.\d{1,20})?$/;

// ISO 8601 extended format (RFC 3339 and what `Date.toISOString` writes): YYYY, YYYY-MM, YYYY-MM-DD, with a time
// hh:mm[:ss[.fff…]] after T (or a space) and an offset Z, ±hh, ±hhmm or ±hh:mm (none: UTC). No nested quantifier; the
// text is at most MAX_DATE_CHARS long.
const ISO = /^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/;

/** Offset in seconds east of UTC from `Z`, `±hh`, `±hhmm` or `±hh:mm`; undefined when out of ±23:59. */
export function offsetSeconds(zone: string | undefined): number | undefined {
  if (!zone || zone === 'Z' || zone === 'z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return (zone[0] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
}

/** Seconds of a calendar date and time at an offset, or a problem when a field is out of its range. */
export function instant(year: number, month: number, day: number, hour: number, minute: number, second: number, offset: number | undefined): DateReading {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { problem: 'is not a calendar date' };
  if (hour > 23 || minute > 59 || second > 59) return { problem: 'is not a time of day (00:00:00 to 23:59:59)' };
  if (offset === undefined) return { problem: 'has an offset beyond ±23:59' };
  return { seconds: daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset };
}

function fromIso(text: string): DateReading | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second, zone] = m;
  const num = (s: string | undefined, fallback: number) => (s === undefined ? fallback : Number(s));
  return instant(Number(year), num(month, 1), num(day, 1), num(hour, 0), num(minute, 0), num(second, 0), offsetSeconds(zone));
}

/**
 * Reads a date: a number or numeric string (Unix seconds up to
 * MAX_PUBLISHED_SECONDS, milliseconds above), or ISO 8601. The seconds may
 * lie outside the accepted range (rangeProblem says so); a problem means
 * the text is no date at all. A time without an offset is UTC. (Feeds also
 * read RFC 822: feed-dates.ts.)
 */
export function readDate(value: number | string): DateReading {
  if (typeof value === 'number') return fromNumber(value);
  const text = value.trim();
  if (text.length > MAX_DATE_CHARS) return { problem: `is longer than ${MAX_DATE_CHARS} characters` };
  if (NUMERIC.test(text)) return fromNumber(Number(text));
  return fromIso(text) ?? { problem: 'is not Unix seconds or an ISO 8601 date' };
}

/** Unix seconds within 1970-01-01 … 9999-12-31 from a number or an ISO 8601 date, or undefined. */
export function toUnixSeconds(value: number | string): number | undefined {
  const reading = readDate(value);
  return 'seconds' in reading && rangeProblem(reading.seconds) === undefined ? reading.seconds : undefined;
}
