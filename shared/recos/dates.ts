/**
 * Article dates (`published_time`) read exactly, without `Date.parse`: Unix
 * seconds, milliseconds and ISO 8601 (the API and tracking), plus RFC 822
 * (feeds). Days are counted with integer arithmetic (Hinnant's civil
 * calendar), so every instant from 1970-01-01T00:00:00Z to
 * 9999-12-31T23:59:59Z reads as itself, and one outside that range is
 * recognised as a date and refused as outside, never folded into it.
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

const SECONDS_PER_DAY = 86_400;

/** Days from 1970-01-01 to the given proleptic Gregorian date (any year). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The proleptic Gregorian date of a day counted from 1970-01-01. */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day: doy - Math.floor((153 * mp + 2) / 5) + 1 };
}

const daysInMonth = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * Integer Unix seconds as ISO 8601 UTC (`2025-06-10T04:30:00Z`); years
 * outside 0–9999 in the expanded form (`+275760-09-13T00:00:00Z`), as
 * `Date.prototype.toISOString` writes them.
 */
export function isoUtc(seconds: number): string {
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const rest = seconds - days * SECONDS_PER_DAY;
  const { year, month, day } = civilFromDays(days);
  const y = year >= 0 && year <= 9999 ? pad(year, 4) : `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 6)}`;
  return `${y}-${pad(month, 2)}-${pad(day, 2)}T${pad(Math.floor(rest / 3600), 2)}:${pad(Math.floor((rest % 3600) / 60), 2)}:${pad(rest % 60, 2)}Z`;
}

/** Why `seconds` is outside 1970-01-01T00:00:00Z … 9999-12-31T23:59:59Z, or undefined when it is inside. */
export function rangeProblem(seconds: number): string | undefined {
  if (seconds < MIN_PUBLISHED_SECONDS) return `is before ${isoUtc(MIN_PUBLISHED_SECONDS)}`;
  if (seconds > MAX_PUBLISHED_SECONDS) return `is after ${isoUtc(MAX_PUBLISHED_SECONDS)}`;
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
function offsetSeconds(zone: string | undefined): number | undefined {
  if (!zone || zone === 'Z' || zone === 'z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return (zone[0] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
}

/** Seconds of a calendar date and time at an offset, or a problem when a field is out of its range. */
function instant(year: number, month: number, day: number, hour: number, minute: number, second: number, offset: number | undefined): DateReading {
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

/** Zone names in RFC 822 dates: its own (UT, GMT and the North American ones) and common ones feeds use. */
const ZONES: Record<string, number> = {
  UT: 0, UTC: 0, GMT: 0, Z: 0, EST: -5, EDT: -4, CST: -6, CDT: -5, MST: -7, MDT: -6, PST: -8, PDT: -7,
  CET: 1, CEST: 2, MEZ: 1, MESZ: 2, WET: 0, WEST: 1, BST: 1, EET: 2, EEST: 3, MSK: 3, IST: 5.5, JST: 9, KST: 9, AEST: 10, AEDT: 11, NZST: 12, NZDT: 13,
};
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** 1–12 from a month's English name or its first three letters (`Sept` too); 0 for anything else. */
function monthNumber(name: string): number {
  const lower = name.toLowerCase();
  return MONTHS.findIndex((full) => full === lower || full.slice(0, 3) === lower || (lower === 'sept' && full === 'september')) + 1;
}

// RFC 822 / 1123 / 2822: [Tue, ]10 Jun 2025 06:30[:00] +0200 | GMT | CEST [(comment)]. Two-digit years: 00–49 are 20xx.
const RFC822 = /^(?:[A-Za-z]{3,9},?\s?)?(\d{1,2})[\s-]([A-Za-z]{3,9})[\s-](\d{4}|\d{2})\s(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s?([+-]\d{2}:?\d{2}|[A-Za-z]{1,5}))?(?:\s?\([A-Za-z ]{0,20}\))?$/;

function fromRfc822(text: string): DateReading | undefined {
  const m = RFC822.exec(text);
  if (!m) return undefined;
  const [, day, monthName, year, hour, minute, second, zone] = m;
  const month = monthNumber(monthName);
  if (month === 0) return undefined;
  const y = year.length === 2 ? Number(year) + (Number(year) < 50 ? 2000 : 1900) : Number(year);
  let offset: number | undefined = 0;
  if (zone && /^[+-]/.test(zone)) offset = offsetSeconds(zone);
  else if (zone) {
    const hours = ZONES[zone.toUpperCase()];
    if (hours === undefined) return { problem: `has a zone (${zone}) that is not known` };
    offset = hours * 3600;
  }
  return instant(y, month, Number(day), Number(hour), Number(minute), second === undefined ? 0 : Number(second), offset);
}

/**
 * Reads a date: a number or numeric string (Unix seconds up to
 * MAX_PUBLISHED_SECONDS, milliseconds above), or ISO 8601 (and with
 * `rfc822`, an RFC 822 date as RSS writes them). The seconds may lie outside
 * the accepted range (rangeProblem says so); a problem means the text is no
 * date at all. A time without an offset is UTC.
 */
export function readDate(value: number | string, { rfc822 = false } = {}): DateReading {
  if (typeof value === 'number') return fromNumber(value);
  const text = value.trim();
  if (text.length > MAX_DATE_CHARS) return { problem: `is longer than ${MAX_DATE_CHARS} characters` };
  if (NUMERIC.test(text)) return fromNumber(Number(text));
  const reading = fromIso(text) ?? (rfc822 ? fromRfc822(text) : undefined);
  return reading ?? { problem: rfc822 ? 'is not Unix seconds, an ISO 8601 or an RFC 822 date' : 'is not Unix seconds or an ISO 8601 date' };
}

/** Unix seconds within 1970-01-01 … 9999-12-31 from a number or an ISO 8601 date, or undefined. */
export function toUnixSeconds(value: number | string): number | undefined {
  const reading = readDate(value);
  return 'seconds' in reading && rangeProblem(reading.seconds) === undefined ? reading.seconds : undefined;
}
