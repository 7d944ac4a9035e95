/**
 * Object keys of the events bucket. Nothing else spells them.
 *
 * - `raw/<client>/<event>/<day>/<name>.jsonl`   raw records (JSON lines, sorted by date)
 * - `events/<client>/<event>/<day>.csv`         the assembled file of a closed day (formula-safe cells)
 * - `partial/<client>/<event>/<day>.csv`        the file of a day still open, rebuilt when new records arrive
 * - `events-raw/…`, `partial-raw/…`             the same files with raw cell values, built only when asked for (`raw=true`)
 * - `tmp/<client>/<event>/<day>/<run>/…`        intermediate merge runs, deleted by the run that made them
 */
import type { CsvVariant } from './csv.js';
import type { EventName } from './types.js';

const suffix = (variant: CsvVariant) => (variant === 'raw' ? '-raw' : '');

export const eventPaths = {
  clientsPrefix: () => 'raw/',
  raw: (clientId: string, event: EventName, day: string) => `raw/${clientId}/${event}/${day}/`,
  file: (clientId: string, event: EventName, day: string, variant: CsvVariant = 'safe') => `events${suffix(variant)}/${clientId}/${event}/${day}.csv`,
  partial: (clientId: string, event: EventName, day: string, variant: CsvVariant = 'safe') => `partial${suffix(variant)}/${clientId}/${event}/${day}.csv`,
  tmp: (clientId: string, event: EventName, day: string, run: string) => `tmp/${clientId}/${event}/${day}/${run}/`,
};

/** The download name of a day's file. */
export const fileName = (event: EventName, day: string) => `${event}_${day}.csv`;
