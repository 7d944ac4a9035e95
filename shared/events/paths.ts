/**
 * Object keys of the events bucket. Nothing else spells them.
 *
 * - `raw/<client>/<event>/<day>/<name>.jsonl`   raw records (JSON lines, sorted by date)
 * - `events/<client>/<event>/<day>.csv`         the assembled file of a closed day
 * - `partial/<client>/<event>/<day>.csv`        the file of a day still open, rebuilt when new records arrive
 * - `tmp/<client>/<event>/<day>/<run>/…`        intermediate merge runs, deleted by the run that made them
 */
import type { EventName } from './types.js';

export const eventPaths = {
  clientsPrefix: () => 'raw/',
  raw: (clientId: string, event: EventName, day: string) => `raw/${clientId}/${event}/${day}/`,
  file: (clientId: string, event: EventName, day: string) => `events/${clientId}/${event}/${day}.csv`,
  partial: (clientId: string, event: EventName, day: string) => `partial/${clientId}/${event}/${day}.csv`,
  tmp: (clientId: string, event: EventName, day: string, run: string) => `tmp/${clientId}/${event}/${day}/${run}/`,
};

/** The download name of a day's file. */
export const fileName = (event: EventName, day: string) => `${event}_${day}.csv`;
