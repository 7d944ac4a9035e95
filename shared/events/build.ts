/**
 * Building CSV rows from raw objects: a streaming merge of the objects'
 * sorted lines (an external merge sort when there are more than FAN_IN of
 * them), duplicates dropped, written through fast-csv into S3 uploads. Used
 * for a whole day (assemble.ts) and for one hour of a day (hours.ts).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import type { CsvFormatterStream } from 'fast-csv';
import { csvFormatter, csvRow, type CsvVariant } from './csv.js';
import { mergeSorted, sortedLines, splitLines, timedLines, type Batch } from './merge.js';
import type { EventStore, StoredObject } from './store.js';
import { EVENT_ID_FIELD, type EventName } from './types.js';

/** Sources merged at once: each holds one S3 stream open (the SDK allows 50 sockets). */
export const FAN_IN = 32;
/** Raw objects up to this size are read whole and sorted in memory, so their order need not be trusted. */
export const WHOLE_OBJECT_BYTES = 256 * 1024;
/** Lines are handed to the upload in batches of about this many characters. */
const BATCH_CHARS = 64 * 1024;

/** Identifies a set of raw objects: rows built from the same set are the same rows. */
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

type Formatter = CsvFormatterStream<string[], string[]>;

/** Writes the merged lines as CSV rows into each formatter in its variant (duplicates dropped), honouring backpressure. */
async function writeRows(event: EventName, batches: AsyncIterable<Batch>, outputs: Array<{ variant: CsvVariant; csv: Formatter }>): Promise<number> {
  let events = 0;
  const duplicate = duplicateFilter();
  try {
    for await (const batch of batches) {
      for (const { at, line } of batch) {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (duplicate(at, record)) continue;
        events++;
        for (const { variant, csv } of outputs) if (!csv.write(csvRow(event, record, variant))) await once(csv, 'drain');
      }
    }
    for (const { csv } of outputs) csv.end();
    return events;
  } catch (err) {
    for (const { csv } of outputs) csv.destroy(err as Error);
    throw err;
  }
}

/** One CSV object written by writeMergedCsv. */
export interface CsvOutput {
  key: string;
  variant: CsvVariant;
  metadata: Record<string, string>;
}

export interface MergeOptions {
  /** True: the §6 header then the rows (a day's file); false: the rows alone (an hour). */
  header: boolean;
  fanIn: number;
  /** Where intermediate merge runs go (deleted before returning). */
  tmpPrefix: string;
}

/**
 * Merges raw objects into date order (stable, duplicates by hidden id dropped) and writes each output's rows in one
 * pass. Memory stays flat: at most `fanIn` streams open, more objects merged first into sorted runs (external merge
 * sort). Returns the number of events written.
 */
export async function writeMergedCsv(store: EventStore, event: EventName, raws: StoredObject[], outputs: CsvOutput[], { header, fanIn, tmpPrefix }: MergeOptions): Promise<number> {
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
    const formatters = outputs.map((o) => ({ ...o, csv: csvFormatter(event, { header }) }));
    const [events] = await Promise.all([
      writeRows(event, mergeSorted(sources.map((s) => source(store, s.object, s.trusted))), formatters),
      ...formatters.map(({ key, metadata, csv }) =>
        store.write(key, csv, { contentType: 'text/csv; charset=utf-8', metadata }).catch((err: Error) => {
          for (const f of formatters) f.csv.destroy(err);
          throw err;
        }),
      ),
    ]);
    // fast-csv ends even an empty output with a row delimiter: rows alone of no event are no bytes.
    if (!header && events === 0) {
      await Promise.all(outputs.map(({ key, metadata }) => store.write(key, Readable.from([]), { contentType: 'text/csv; charset=utf-8', metadata })));
    }
    return events;
  } finally {
    if (tmpKeys.length > 0) await store.remove(tmpKeys).catch(() => undefined);
  }
}
