import { randomUUID } from 'node:crypto';
import { FAN_IN, sourceDigest, writeMergedCsv } from './build.js';
import { csvHeaderLine, type CsvVariant } from './csv.js';
import { assembleHours, rawByHour } from './hours.js';
import { mapLimit } from './map-limit.js';
import { eventPaths } from './paths.js';
import type { EventStore, StoredObject } from './store.js';
import { eventNames, type EventName } from './types.js';

export interface AssembleOptions {
  /** `file`: the day's file (`events/…`); `partial`: the running file of a day still open. */
  target?: 'file' | 'partial';
  /** Rebuild even when the raw objects did not change since the last build (its hours too). */
  force?: boolean;
  fanIn?: number;
  /** `safe` (default): formula-safe cells; `raw`: the recorded values, under their own keys. */
  variant?: CsvVariant;
  /** `hours` (default): the day's hours then the file stitched from them; `whole`: the whole day in one merge (always for raw objects written before hours existed). */
  method?: 'hours' | 'whole';
}

export interface AssembleResult {
  clientId: string;
  event: EventName;
  day: string;
  /** The object written or found, undefined when the day has no raw records. */
  key?: string;
  rawObjects: number;
  /** Events written (undefined when an up-to-date file was kept). */
  events?: number;
  /** True when the file was already built from exactly these raw objects. */
  upToDate: boolean;
  /** Hours assembled from their raw objects by this call (the others were up to date). */
  hoursBuilt?: string[];
  /** Raw objects read by this call. */
  rawObjectsRead?: number;
}

/**
 * Builds one client, event and UTC day's CSV from its raw objects, sorted by date, deduplicated, byte-identical on
 * rebuild: by hours (default; stale hours assembled, then all copied inside S3) or whole (one streaming merge). The
 * file records its sources' digest, so a re-run skips it unless late records changed them.
 */
export async function assembleEvents(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  { target = 'file', force = false, fanIn = FAN_IN, variant = 'safe', method = 'hours' }: AssembleOptions = {},
): Promise<AssembleResult> {
  const plan = await planAssembly(store, clientId, event, day, { target, force, variant });
  if (plan.result) return plan.result;
  const [result] = await build(store, [plan], { force, fanIn, method });
  return result;
}

/**
 * The closed day's files of one client and event in both variants (the
 * daily job): one listing of the raw objects, and one pass over the hours
 * either file lacks. The raw variant is built with the formula-safe one so
 * that `?raw=true` of a past day is a stitched file too, never a whole day
 * merged inside a request. Returns the formula-safe file's result, the raw
 * one's in `raw`.
 */
export async function assembleDayFiles(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  { force = false, fanIn = FAN_IN }: { force?: boolean; fanIn?: number } = {},
): Promise<AssembleResult & { raw: AssembleResult }> {
  const raws = await listRaw(store, clientId, event, day);
  const plans = await Promise.all((['safe', 'raw'] as const).map((variant) => planAssembly(store, clientId, event, day, { force, variant }, raws)));
  const built = await build(store, plans.filter((p) => !p.result), { force, fanIn, method: 'hours' });
  const [safe, raw] = plans.map((p) => p.result ?? built.find((b) => b.key === p.key)!);
  return { ...safe, raw };
}

/** Builds the files of one client, event and day in the variants planned (the same raw objects), in one pass over what they lack. */
async function build(store: EventStore, plans: Plan[], { force, fanIn, method }: { force: boolean; fanIn: number; method: 'hours' | 'whole' }): Promise<AssembleResult[]> {
  if (plans.length === 0) return [];
  const { clientId, event, day, raws } = plans[0];
  const whole = method === 'whole' || rawByHour(clientId, event, day, raws).legacy.length > 0;
  const results = whole ? await buildWhole(store, plans, fanIn) : await buildFromHours(store, plans, { force, fanIn });
  // Once the day's file is built, the running file of the open day is obsolete.
  const closed = plans.filter((p) => p.key === eventPaths.file(clientId, event, day, p.variant));
  if (closed.length > 0) await store.remove(closed.map((p) => eventPaths.partial(clientId, event, day, p.variant)));
  return results;
}

const listRaw = async (store: EventStore, clientId: string, event: EventName, day: string) =>
  (await store.list(eventPaths.raw(clientId, event, day))).filter((o) => o.key.endsWith('.jsonl'));

/** What building one file needs: its raw objects and their digest; `result` when there is nothing to build. */
interface Plan {
  clientId: string;
  event: EventName;
  day: string;
  variant: CsvVariant;
  key: string;
  raws: StoredObject[];
  digest: string;
  result?: AssembleResult;
}

/** Lists the raw objects of a file (unless given) and decides whether it must be built (a few requests, no reading). */
async function planAssembly(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  { target = 'file', force = false, variant = 'safe' }: AssembleOptions,
  listed?: StoredObject[],
): Promise<Plan> {
  const raws = listed ?? (await listRaw(store, clientId, event, day));
  const key = target === 'file' ? eventPaths.file(clientId, event, day, variant) : eventPaths.partial(clientId, event, day, variant);
  const base = { clientId, event, day, rawObjects: raws.length };
  const digest = sourceDigest(raws);
  const plan: Plan = { clientId, event, day, variant, key, raws, digest };
  const existing = await store.head(key);
  if (raws.length === 0 && !existing) return { ...plan, result: { ...base, upToDate: true } };
  if (!force && existing?.metadata['source-digest'] === digest) return { ...plan, result: { ...base, key, upToDate: true } };
  return plan;
}

const fileMetadata = (plan: Plan) => ({ 'source-digest': plan.digest, 'raw-objects': String(plan.raws.length) });

/** The whole day in one merge, every variant planned in the same pass. */
async function buildWhole(store: EventStore, plans: Plan[], fanIn: number): Promise<AssembleResult[]> {
  const { clientId, event, day, raws } = plans[0];
  const tmpPrefix = eventPaths.tmp(clientId, event, day, randomUUID());
  const outputs = plans.map((p) => ({ key: p.key, variant: p.variant, metadata: fileMetadata(p) }));
  const events = await writeMergedCsv(store, event, raws, outputs, { header: true, fanIn, tmpPrefix });
  return plans.map((p) => ({ clientId, event, day, rawObjects: raws.length, key: p.key, events, upToDate: false, hoursBuilt: [], rawObjectsRead: raws.length }));
}

/** The hours not yet built (in every variant planned, one pass), then each file stitched from the header and every hour's rows. */
async function buildFromHours(store: EventStore, plans: Plan[], { force, fanIn }: { force: boolean; fanIn: number }): Promise<AssembleResult[]> {
  const { clientId, event, day, raws } = plans[0];
  const hours = await assembleHours(store, clientId, event, day, { variants: plans.map((p) => p.variant), raws, force, fanIn });
  const events = hours.hours.reduce((sum, h) => sum + h.events, 0);
  return Promise.all(
    plans.map(async (plan) => {
      const pieces = hours.hours.map((h) => h.parts[plan.variant]!).filter((p) => p.size > 0);
      await store.concat(plan.key, [{ text: csvHeaderLine(event) }, ...pieces], { contentType: 'text/csv; charset=utf-8', metadata: fileMetadata(plan) });
      return { clientId, event, day, rawObjects: raws.length, key: plan.key, events, upToDate: false, hoursBuilt: hours.built, rawObjectsRead: hours.rawObjectsRead };
    }),
  );
}

/**
 * Assembles the files of one day, both variants, for every client with raw
 * records (or the given clients), all event types. The up-to-date checks
 * run `concurrency` at a time; the builds run one at a time, so the open
 * object streams (fanIn + upload parts) stay under the SDK's 50 sockets.
 */
export async function assembleDay(
  store: EventStore,
  day: string,
  { clients, force = false, concurrency = 8 }: { clients?: string[]; force?: boolean; concurrency?: number } = {},
): Promise<Array<AssembleResult & { raw: AssembleResult }>> {
  const ids = clients ?? (await store.listChildren(eventPaths.clientsPrefix()));
  const work = ids.flatMap((clientId) => eventNames.map((event) => ({ clientId, event })));
  // Only the verdicts are kept: a busy day's object lists are listed again when built.
  const checked = await mapLimit(work, concurrency, async ({ clientId, event }) => {
    const raws = await listRaw(store, clientId, event, day);
    const [safe, raw] = await Promise.all((['safe', 'raw'] as const).map(async (variant) => (await planAssembly(store, clientId, event, day, { force, variant }, raws)).result));
    return safe && raw ? { ...safe, raw } : undefined;
  });
  const results: Array<AssembleResult & { raw: AssembleResult }> = [];
  for (let i = 0; i < work.length; i++) {
    results.push(checked[i] ?? (await assembleDayFiles(store, work[i].clientId, work[i].event, day, { force })));
  }
  return results.filter((r) => r.rawObjects > 0 || r.key);
}
