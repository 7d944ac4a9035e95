/**
 * Object keys of the events bucket. Nothing else spells them.
 *
 * - `raw/<client>/<event>/<day>/<HH>/<name>.jsonl`  raw records of one UTC hour (JSON lines, sorted by date); `<event>` is
 *   a spec §6 event or a raw-only one (`nl_delete`, read by the change feed only: shared/events/types.ts);
 *   objects written before hours existed sit directly under the day (`raw/<client>/<event>/<day>/<name>.jsonl`)
 * - `hours/<client>/<event>/<day>/<HH>-<digest>.csv`  the rows (no header) of one hour, built from the raw
 *   objects whose digest the name carries; a day's file is the header then its hours in order
 * - `hours/<client>/<event>/<day>/<HH>-<digest>.<n>.events`  empty marker written after that hour's rows: the hour is
 *   built, with n events (a listing tells which hours are built and their counts, without reading them)
 * - `events/<client>/<event>/<day>.csv`         the assembled file of a closed day (formula-safe cells)
 * - `partial/<client>/<event>/<day>.csv`        the file of a day still open, rebuilt when new records arrive
 * - `events-raw/…`, `partial-raw/…`, `hours-raw/…`  the same with raw cell values (day files built only when asked for)
 * - `tmp/<client>/<event>/<day>/<run>/…`        intermediate merge runs, deleted by the run that made them
 */
import type { CsvVariant } from './csv.js';
import type { EventName, RawEventName } from './types.js';

const suffix = (variant: CsvVariant) => (variant === 'raw' ? '-raw' : '');

/** Length of the source digest carried in an hour's key (hex characters, 128 bits). */
const HOUR_DIGEST_CHARS = 32;

export const eventPaths = {
  clientsPrefix: () => 'raw/',
  raw: (clientId: string, event: EventName, day: string) => `raw/${clientId}/${event}/${day}/`,
  rawHour: (clientId: string, event: RawEventName, day: string, hour: string) => `raw/${clientId}/${event}/${day}/${hour}/`,
  hours: (clientId: string, event: EventName, day: string, variant: CsvVariant = 'safe') => `hours${suffix(variant)}/${clientId}/${event}/${day}/`,
  hour: (clientId: string, event: EventName, day: string, variant: CsvVariant, hour: string, digest: string) =>
    `hours${suffix(variant)}/${clientId}/${event}/${day}/${hour}-${digest.slice(0, HOUR_DIGEST_CHARS)}.csv`,
  hourDone: (clientId: string, event: EventName, day: string, variant: CsvVariant, hour: string, digest: string, events: number) =>
    `hours${suffix(variant)}/${clientId}/${event}/${day}/${hour}-${digest.slice(0, HOUR_DIGEST_CHARS)}.${events}.events`,
  file: (clientId: string, event: EventName, day: string, variant: CsvVariant = 'safe') => `events${suffix(variant)}/${clientId}/${event}/${day}.csv`,
  partial: (clientId: string, event: EventName, day: string, variant: CsvVariant = 'safe') => `partial${suffix(variant)}/${clientId}/${event}/${day}.csv`,
  tmp: (clientId: string, event: EventName, day: string, run: string) => `tmp/${clientId}/${event}/${day}/${run}/`,
};

/** The UTC hours of a day, `00` to `23`. */
export const dayHours = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0'));

/** The hour folder (`00`–`23`) of a raw object listed under its day's prefix; undefined for an object written before hours existed. */
export function rawHourOf(dayPrefix: string, key: string): string | undefined {
  const m = /^(\d{2})\//.exec(key.slice(dayPrefix.length));
  return m && dayHours.includes(m[1]) ? m[1] : undefined;
}

/** What an hour's key carries: its hour, source digest, and for the marker (`done`) the event count; undefined for another key. */
export function parseHourKey(hoursPrefix: string, key: string): { hour: string; digest: string; events?: number } | undefined {
  const m = /^(\d{2})-([0-9a-f]+)(?:\.csv|\.(\d+)\.events)$/.exec(key.slice(hoursPrefix.length));
  return m ? { hour: m[1], digest: m[2], events: m[3] === undefined ? undefined : Number(m[3]) } : undefined;
}

/** True when an hour's key was built from the sources of `digest` (the key carries its first HOUR_DIGEST_CHARS characters). */
export const sameSources = (keyDigest: string, digest: string) => keyDigest === digest.slice(0, HOUR_DIGEST_CHARS);

/** The download name of a day's file. */
export const fileName = (event: EventName, day: string) => `${event}_${day}.csv`;
