import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import type { CsvFormatterStream } from 'fast-csv';
import { csvFormatter, csvRow, type CsvVariant } from './csv.js';
import { mergeSorted, sortedLines, splitLines, timedLines, type Batch } from './merge.js';
import { eventPaths } from './paths.js';
import type { EventStore, StoredObject } from './store.js';
import { EVENT_ID_FIELD, eventNames, type EventName } from './types.js';

/** Sources merged at once: each holds one S3 stream open (the SDK allows 50 sockets). */
export const FAN_IN = 32;
/** Raw objects up to this size are read whole and sorted in memory, so their order need not be trusted. */
export const WHOLE_OBJECT_BYTES = 256 * 1024;
/** Lines are handed to the upload in batches of about this many characters. */
const BATCH_CHARS = 64 * 1024;

export interface AssembleOptions {
  /** `file`: the day's file (`events/…`); `partial`: the running file of a day still open. */
  target?: 'file' | 'partial';
  /** Rebuild even when the raw objects did not change since the last build. */
  force?: boolean;
  fanIn?: number;
  /** `safe` (default): formula-safe cells; `raw`: the recorded values, under their own keys. */
  variant?: CsvVariant;
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
}

/** Identifies a set of raw objects: a file built from the same set is the same file. */
export function sourceDigest(objects: StoredObject[]): string {
  const hash = createHash('sha256');
  for (const o of objects) hash.update(`${o.key}\u0000${o.etag}\u0000${o.size}\n`);
  return hash.digest('hex');
}

async function* readWhole(store: EventStore, key: string): AsyncGenerator<Batch> {
  const lines: string[] = [];
  for await (const batch of splitLines(await store.read(key))) lines.push(...batch);
  yield sortedLines(lines);
}

async function* readStream(store: EventStore, key: string): AsyncGenerator<Batch> {
  yield* timedLines(splitLines(await store.read(key)), key);
}

/** A sorted source over one object, opened only when the merge first pulls from it. */
function source(store: EventStore, o: StoredObject, trusted: boolean): AsyncIterable<Batch> {
  return !trusted && o.size <= WHOLE_OBJECT_BYTES ? readWhole(store, o.key) : readStream(store, o.key);
}

/** Batches lines into strings of about BATCH_CHARS for the upload stream. */
async function* jsonLines(batches: AsyncIterable<Batch>): AsyncGenerator<string> {
  let text = '';
  for await (const batch of batches) {
    for (const { line } of batch) text += line + '\n';
    if (text.length >= BATCH_CHARS) {
      yield text;
      text = '';
    }
  }
  if (text) yield text;
}

/**
 * Drops repeated events: lines with the same hidden id (a redelivered
 * notification written again) have the same date, so they meet among the
 * lines of one instant of the merged stream; only that instant's ids are
 * kept in memory. Lines without an id are all kept.
 */
export function duplicateFilter(): (at: number, record: Record<string, unknown>) => boolean {
  let instant = NaN;
  const seen = new Set<string>();
  return (at, record) => {
    const id = record[EVENT_ID_FIELD];
    if (typeof id !== 'string') return false;
    if (at !== instant) {
      instant = at;
      seen.clear();
    }
    if (seen.has(id)) return true;
    seen.add(id);
    return false;
  };
}

/** Writes the merged lines as CSV rows into the formatter (duplicates dropped), honouring backpressure. */
async function writeRows(event: EventName, variant: CsvVariant, batches: AsyncIterable<Batch>, csv: CsvFormatterStream<string[], string[]>): Promise<number> {
  let events = 0;
  const duplicate = duplicateFilter();
  try {
    for await (const batch of batches) {
      for (const { at, line } of batch) {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (duplicate(at, record)) continue;
        events++;
        if (!csv.write(csvRow(event, record, variant))) await once(csv, 'drain');
      }
    }
    csv.end();
    return events;
  } catch (err) {
    csv.destroy(err as Error);
    throw err;
  }
}

/**
 * Builds the CSV file of one client, event and UTC day from its raw objects:
 * the §6 header, one line per event sorted by date (equal dates keep the
 * order of the raw object keys, so a rebuild from the same objects is
 * byte-identical; a line whose hidden id was already written is dropped), streamed to S3 by multipart upload. Memory stays flat:
 * at most `fanIn` object streams are open; more raw objects are first merged
 * into sorted intermediate runs (a multi-pass external merge sort), which
 * are deleted afterwards. The file records the digest of its sources, so a
 * re-run skips an up-to-date file and rebuilds one that late records changed.
 */
export async function assembleEvents(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  { target = 'file', force = false, fanIn = FAN_IN, variant = 'safe' }: AssembleOptions = {},
): Promise<AssembleResult> {
  const plan = await planAssembly(store, clientId, event, day, { target, force, variant });
  return plan.result ?? buildFile(store, plan, fanIn);
}

/** What building one file needs: its raw objects and their digest; `result` when there is nothing to build. */
interface Plan {
  clientId: string;
  event: EventName;
  day: string;
  target: 'file' | 'partial';
  variant: CsvVariant;
  key: string;
  raws: StoredObject[];
  digest: string;
  result?: AssembleResult;
}

/** Lists the raw objects of a file and decides whether it must be built (a few requests, no reading). */
async function planAssembly(
  store: EventStore,
  clientId: string,
  event: EventName,
  day: string,
  { target = 'file', force = false, variant = 'safe' }: AssembleOptions,
): Promise<Plan> {
  const raws = (await store.list(eventPaths.raw(clientId, event, day))).filter((o) => o.key.endsWith('.jsonl'));
  const key = target === 'file' ? eventPaths.file(clientId, event, day, variant) : eventPaths.partial(clientId, event, day, variant);
  const base = { clientId, event, day, rawObjects: raws.length };
  const digest = sourceDigest(raws);
  const plan: Plan = { clientId, event, day, target, variant, key, raws, digest };
  const existing = await store.head(key);
  if (raws.length === 0 && !existing) return { ...plan, result: { ...base, upToDate: true } };
  if (!force && existing?.metadata['source-digest'] === digest) return { ...plan, result: { ...base, key, upToDate: true } };
  return plan;
}

/** Builds a planned file: merge passes, then the CSV upload. */
async function buildFile(store: EventStore, { clientId, event, day, target, variant, key, raws, digest }: Plan, fanIn: number): Promise<AssembleResult> {
  const base = { clientId, event, day, rawObjects: raws.length };
  // Once the day's file is built, the running file of the open day is obsolete.
  const dropPartial = () => (target === 'file' ? store.remove([eventPaths.partial(clientId, event, day, variant)]) : Promise.resolve());
  const run = randomUUID();
  const tmpPrefix = eventPaths.tmp(clientId, event, day, run);
  const tmpKeys: string[] = [];
  try {
    let sources = raws.map((o) => ({ object: o, trusted: false }));
    for (let pass = 0; sources.length > fanIn; pass++) {
      const next: typeof sources = [];
      for (let i = 0; i < sources.length; i += fanIn) {
        const group = sources.slice(i, i + fanIn);
        const runKey = `${tmpPrefix}${pass}-${String(i / fanIn).padStart(6, '0')}.jsonl`;
        tmpKeys.push(runKey);
        const merged = mergeSorted(group.map((s) => source(store, s.object, s.trusted)));
        await store.write(runKey, Readable.from(jsonLines(merged)), { contentType: 'application/x-ndjson' });
        next.push({ object: { key: runKey, size: Infinity, etag: '' }, trusted: true });
      }
      sources = next;
    }
    const csv = csvFormatter(event);
    const [events] = await Promise.all([
      writeRows(event, variant, mergeSorted(sources.map((s) => source(store, s.object, s.trusted))), csv),
      store
        .write(key, csv, { contentType: 'text/csv; charset=utf-8', metadata: { 'source-digest': digest, 'raw-objects': String(raws.length) } })
        .catch((err: Error) => {
          csv.destroy(err);
          throw err;
        }),
    ]);
    await dropPartial();
    return { ...base, key, events, upToDate: false };
  } finally {
    if (tmpKeys.length > 0) await store.remove(tmpKeys).catch(() => undefined);
  }
}

/** Runs `fn` over items with at most `limit` running at once. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

/**
 * Assembles the files of one day for every client with raw records (or the
 * given clients), all event types. The up-to-date checks run `concurrency`
 * at a time; the builds run one at a time, so the open object streams
 * (fanIn + upload parts) stay under the SDK's 50 sockets.
 */
export async function assembleDay(
  store: EventStore,
  day: string,
  { clients, force = false, concurrency = 8 }: { clients?: string[]; force?: boolean; concurrency?: number } = {},
): Promise<AssembleResult[]> {
  const ids = clients ?? (await store.listChildren(eventPaths.clientsPrefix()));
  const work = ids.flatMap((clientId) => eventNames.map((event) => ({ clientId, event })));
  // Only the verdicts are kept: a busy day's object lists are listed again when built.
  const checked = await mapLimit(work, concurrency, async ({ clientId, event }) => (await planAssembly(store, clientId, event, day, { force })).result);
  const results: AssembleResult[] = [];
  for (let i = 0; i < work.length; i++) {
    results.push(checked[i] ?? (await assembleEvents(store, work[i].clientId, work[i].event, day, { force: true })));
  }
  return results.filter((r) => r.rawObjects > 0 || r.key);
}
