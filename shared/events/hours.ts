/**
 * The hours of a day's file: raw records sit in one folder per UTC hour, so each hour is assembled alone and a day's
 * file is its header then its hours, byte for byte the whole day's. An hour's key carries the digest of its raw
 * objects and a marker its event count, so one listing tells which hours are up to date.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { FAN_IN, sourceDigest, writeMergedCsv } from './build.js';
import type { CsvVariant } from './csv.js';
import { eventPaths, parseHourKey, rawHourOf, sameSources } from './paths.js';
import type { EventStore, StoredObject } from './store.js';
import type { EventName } from './types.js';

/**
 * An hour rebuilt from new raw objects leaves its previous rows in place
 * this long after the new ones are written, so a file being put together
 * from them meanwhile still finds them; later builds or checks of the hour
 * delete them (and the bucket's lifecycle rule, after days).
 */
export const SUPERSEDED_GRACE_MS = 15 * 60_000;

/** The raw objects of a day by hour; `legacy`: objects written before hours existed, directly under the day. */
export function rawByHour(clientId: string, event: EventName, day: string, raws: StoredObject[]): { hours: Map<string, StoredObject[]>; legacy: StoredObject[] } {
  const prefix = eventPaths.raw(clientId, event, day);
  const hours = new Map<string, StoredObject[]>();
  const legacy: StoredObject[] = [];
  for (const o of raws) {
    const hour = rawHourOf(prefix, o.key);
    if (!hour) legacy.push(o);
    else if (hours.has(hour)) hours.get(hour)!.push(o);
    else hours.set(hour, [o]);
  }
  return { hours: new Map([...hours].sort(([a], [b]) => (a < b ? -1 : 1))), legacy };
}

/** The built rows of one hour in one variant. */
export interface HourPart {
  key: string;
  size: number;
  events: number;
}

/** One hour of a plan: its raw objects, their digest, the variants up to date and those to build. */
export interface HourPlan {
  hour: string;
  raws: StoredObject[];
  digest: string;
  parts: Partial<Record<CsvVariant, HourPart>>;
  missing: CsvVariant[];
}

export interface HoursPlan {
  clientId: string;
  event: EventName;
  day: string;
  /** Hours with raw records (of those asked for), in order. */
  hours: HourPlan[];
  /** Raw objects written before hours existed: such a day is assembled whole, not by hours. */
  legacy: StoredObject[];
  /** Rows and markers of earlier sources, by variant, to delete once their grace has passed. */
  superseded: StoredObject[];
  /** Newest marker of each variant and hour (ms), for the grace. */
  newest: Map<string, number>;
}

/**
 * Finds which hours of a day need building (a listing of the raw objects,
 * unless given, and one of the hours per variant; nothing read). `hours`
 * limits it to those hours; `force` rebuilds them all.
 */
export async function planHours(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  { variants, raws, hours: only, force = false }: { variants: CsvVariant[]; raws?: StoredObject[]; hours?: string[]; force?: boolean },
): Promise<HoursPlan> {
  const all = raws ?? (await store.list(eventPaths.raw(clientId, event, day))).filter((o) => o.key.endsWith('.jsonl'));
  const { hours, legacy } = rawByHour(clientId, event, day, all);
  const plans: HourPlan[] = [...hours]
    .filter(([hour]) => !only || only.includes(hour))
    .map(([hour, objects]) => ({ hour, raws: objects, digest: sourceDigest(objects), parts: {}, missing: [] }));
  const superseded: StoredObject[] = [];
  const newest = new Map<string, number>();
  // Nothing to check without raw records (a day with none, or hours asked for that have none): no listing of the hours.
  if (legacy.length > 0 || plans.length === 0) return { clientId, event, day, hours: plans, legacy, superseded, newest };
  await Promise.all(
    variants.map(async (variant) => {
      const prefix = eventPaths.hours(clientId, event, day, variant);
      const listed = await store.list(prefix);
      const byKey = new Map(listed.map((o) => [o.key, o]));
      for (const plan of plans) {
        const mine = listed.filter((o) => parseHourKey(prefix, o.key)?.hour === plan.hour);
        const marker = mine.find((o) => {
          const parsed = parseHourKey(prefix, o.key)!;
          return parsed.events !== undefined && sameSources(parsed.digest, plan.digest);
        });
        const rows = byKey.get(eventPaths.hour(clientId, event, day, variant, plan.hour, plan.digest));
        if (marker && rows && !force) plan.parts[variant] = { key: rows.key, size: rows.size, events: parseHourKey(prefix, marker.key)!.events! };
        else plan.missing.push(variant);
        newest.set(`${variant}/${plan.hour}`, Math.max(0, ...mine.filter((o) => o.key.endsWith('.events')).map((o) => o.modified ?? 0)));
        superseded.push(...mine.filter((o) => !sameSources(parseHourKey(prefix, o.key)!.digest, plan.digest)));
      }
    }),
  );
  return { clientId, event, day, hours: plans, legacy, superseded, newest };
}

export interface HoursResult {
  /** The hours with raw records, each with its rows in every variant asked for. */
  hours: Array<{ hour: string; events: number; parts: Partial<Record<CsvVariant, HourPart>> }>;
  /** Hours built by this call. */
  built: string[];
  /** Raw objects read by this call (those of the hours built). */
  rawObjectsRead: number;
}

/**
 * Builds the hours a plan found missing or out of date, one at a time, each
 * in one pass over its raw objects for all its missing variants; then
 * deletes rows of earlier sources whose grace has passed. Idempotent: an
 * hour built twice from the same raw objects is the same bytes.
 */
export async function buildHours(store: EventStore, plan: HoursPlan, { fanIn = FAN_IN, now = Date.now() }: { fanIn?: number; now?: number } = {}): Promise<HoursResult> {
  const { clientId, event, day } = plan;
  if (plan.legacy.length > 0) throw new Error(`${eventPaths.raw(clientId, event, day)} holds raw objects outside hour folders; assemble the day whole`);
  const built: string[] = [];
  let rawObjectsRead = 0;
  const run = randomUUID();
  for (const h of plan.hours) {
    if (h.missing.length === 0) continue;
    const outputs = h.missing.map((variant) => ({ variant, key: eventPaths.hour(clientId, event, day, variant, h.hour, h.digest), metadata: { 'raw-objects': String(h.raws.length) } }));
    const events = await writeMergedCsv(store, event, h.raws, outputs, { header: false, fanIn, tmpPrefix: `${eventPaths.tmp(clientId, event, day, run)}${h.hour}-` });
    for (const { variant, key } of outputs) {
      await store.write(eventPaths.hourDone(clientId, event, day, variant, h.hour, h.digest, events), Readable.from([]), { contentType: 'text/plain' });
      h.parts[variant] = { key, size: (await store.head(key))!.size, events };
      plan.newest.set(`${variant}/${h.hour}`, now);
    }
    built.push(h.hour);
    rawObjectsRead += h.raws.length;
  }
  const expired = plan.superseded.filter((o) => {
    const variant: CsvVariant = o.key.startsWith('hours-raw/') ? 'raw' : 'safe';
    const hour = parseHourKey(eventPaths.hours(clientId, event, day, variant), o.key)!.hour;
    return (plan.newest.get(`${variant}/${hour}`) ?? 0) + SUPERSEDED_GRACE_MS <= now;
  });
  if (expired.length > 0) await store.remove(expired.map((o) => o.key));
  return {
    hours: plan.hours.map((h) => ({ hour: h.hour, events: Object.values(h.parts)[0]?.events ?? 0, parts: h.parts })),
    built,
    rawObjectsRead,
  };
}

/** Plans then builds the hours of a day (see planHours, buildHours). */
export async function assembleHours(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  options: { variants: CsvVariant[]; raws?: StoredObject[]; hours?: string[]; force?: boolean; fanIn?: number; now?: number },
): Promise<HoursResult> {
  return buildHours(store, await planHours(store, clientId, event, day, options), options);
}
