/**
 * Feed dates: what dates.ts reads, plus RFC 822 as RSS writes it, and
 * instants written back as ISO 8601 (the feed job's lines). Apart from
 * dates.ts so the API's functions do not bundle it.
 */
import { instant, MAX_DATE_CHARS, offsetSeconds, readDate, SECONDS_PER_DAY, type DateReading } from './dates.js';

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

/** A feed date: Unix seconds, ISO 8601 (dates.ts's rules) or RFC 822. */
export function readFeedDate(value: string): DateReading {
  const reading = readDate(value);
  if ('seconds' in reading || value.trim().length > MAX_DATE_CHARS) return reading;
  return fromRfc822(value.trim()) ?? reading;
}
