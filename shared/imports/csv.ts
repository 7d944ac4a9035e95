/**
 * CSV rules of the import (spec 2.8): delimiter detection, header mapping,
 * row → subscriber line. The streaming reader yields records with their
 * line numbers; everything else here is pure.
 */
import { parse } from 'fast-csv';
import { Readable } from 'node:stream';
import * as v from 'valibot';
import { isReportError, parseSubscriberLine } from '../subscribers/parse.js';
import { defaultGuid } from '../subscribers/rules.js';
import { EmailSchema } from '../subscribers/schemas.js';
import type { ReportError, SubscriberLine } from '../subscribers/types.js';

/** A fault of the whole file (no email column, malformed CSV): the import fails with this cause. */
export class ImportFailure extends Error {}

/** Longest header line looked at for the delimiter. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Longest record (bytes, quoted line breaks included); a longer one fails the file instead of filling memory. */
export const MAX_ROW_BYTES = 64 * 1024;
const KNOWN = new Set(['email', 'subscribed', 'unsubscribed_cause', 'guid', 'open_tracking_consent']);

/** `;` when the header line has more semicolons than commas outside quotes, else `,`. */
export function detectDelimiter(headerLine: string): ',' | ';' {
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  for (const ch of headerLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === ',') commas++;
    else if (!quoted && ch === ';') semicolons++;
  }
  return semicolons > commas ? ';' : ',';
}

/**
 * Maps header cells to field names: known columns in any case, `data_*`
 * columns with the prefix in any case and the rest as written; other
 * columns are ignored (undefined). No email column: ImportFailure.
 */
export function readHeader(cells: string[]): Array<string | undefined> {
  const seen = new Set<string>();
  const columns = cells.map((cell) => {
    const name = cell.trim();
    const lower = name.toLowerCase();
    const field = KNOWN.has(lower) ? lower : lower.startsWith('data_') && name.length > 5 ? `data_${name.slice(5)}` : undefined;
    if (field === undefined || seen.has(field)) return undefined;
    seen.add(field);
    return field;
  });
  if (!seen.has('email')) {
    const shown = cells.slice(0, 10).map((c) => JSON.stringify(c.trim())).join(', ');
    throw new ImportFailure(`the header line has no email column (columns: ${shown || 'none'})`);
  }
  return columns;
}

/** True for a record with no content (an empty line). */
export function isBlank(cells: string[]): boolean {
  return cells.every((c) => c.trim() === '');
}

/**
 * One CSV record → a subscriber line or a report error. Empty cells count
 * as absent; an invalid `subscribed` counts as absent (spec 2.8); guid
 * defaults to the md5 of the lower-cased email; `opId` makes re-applying
 * the line after a resumed import a no-op.
 */
export function recordToLine(columns: Array<string | undefined>, cells: string[], line: number, opId: string): SubscriberLine | ReportError {
  const raw: Record<string, string> = {};
  columns.forEach((field, i) => {
    const value = cells[i];
    if (field !== undefined && value !== undefined && value.trim() !== '') raw[field] = value;
  });
  const parsed = parseSubscriberLine(raw, line, { lenientSubscribed: true });
  if (isReportError(parsed)) return parsed;
  return { ...parsed, guid: parsed.guid ?? defaultGuid(parsed.email), opId };
}

/** The normalised address of a rejected line when it has a valid one (it is in the file for update_list). */
export function validEmailOf(error: ReportError): string | undefined {
  const parsed = v.safeParse(EmailSchema, error.email);
  return parsed.success ? parsed.output : undefined;
}

/**
 * Passes the bytes through and fails (ImportFailure) as soon as one record
 * (from a line break outside quotes to the next) is longer than `max` bytes.
 */
export async function* limitRows(source: AsyncIterable<Uint8Array>, max: number): AsyncGenerator<Uint8Array> {
  let quoted = false;
  let length = 0;
  let record = 1;
  for await (const chunk of source) {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === 0x22) quoted = !quoted;
      else if (byte === 0x0a && !quoted) {
        record++;
        length = 0;
        continue;
      }
      if (++length > max) throw new ImportFailure(`line ${record} is longer than ${max} bytes; the import stops there`);
    }
    yield chunk;
  }
}

export interface CsvRecord {
  /** 1-based record number; the header is line 1. Equals the physical line unless a quoted field spans lines. */
  line: number;
  cells: string[];
}

/**
 * Streams the records of a CSV file (UTF-8, with or without BOM, CRLF or
 * LF, quoted fields) with the delimiter detected from the header line.
 * Backpressure flows from the consumer to the source. Malformed CSV, or a
 * record longer than `maxRowBytes`: ImportFailure.
 */
export async function* readCsv(source: AsyncIterable<Uint8Array>, maxRowBytes = MAX_ROW_BYTES): AsyncGenerator<CsvRecord> {
  const it = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.indexOf(0x0a) < 0 && head.length < MAX_HEADER_BYTES) {
    const next = await it.next();
    if (next.done) {
      ended = true;
      break;
    }
    head = Buffer.concat([head, Buffer.from(next.value)]);
  }
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) head = head.subarray(3);
  const newline = head.indexOf(0x0a);
  const delimiter = detectDelimiter(head.subarray(0, newline < 0 ? head.length : newline).toString('utf8'));
  const rest = async function* () {
    yield head;
    if (ended) return;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  };
  const input = Readable.from(limitRows(rest(), maxRowBytes), { objectMode: false });
  const parser = parse<string[], string[]>({ delimiter, headers: false, ignoreEmpty: false, encoding: 'utf8' });
  input.once('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let line = 0;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      line++;
      yield { line, cells };
    }
  } catch (err) {
    if ((err as Error).message?.startsWith('Parse Error')) throw new ImportFailure(`malformed CSV (${line} line(s) read before the fault): ${(err as Error).message}`);
    throw err;
  } finally {
    input.destroy();
    parser.destroy();
  }
}
