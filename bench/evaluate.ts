/**
 * `npm run evaluate -- --log views.csv`: replays a publisher's own exported
 * page-view log into a fresh local stack and measures the recommendations
 * against most-read and plain co-visitation on the same readers
 * (bench/recos-replay.ts: leave-last-out, hit rate@10, nDCG@10, MRR@10,
 * catalogue coverage). docs/evaluate.md is the user's guide.
 *
 * The log is a CSV file with a header line (`,` or `;` separated, UTF-8 with
 * or without BOM, quoted fields allowed). Column names are matched without
 * regard to case, spaces or dashes:
 *
 * - `reader_id` (also `user_id`, `reader`, `user`): required, 1–128 characters.
 * - `url` (also `page_url`): required, an absolute http(s) URL.
 * - `time` (also `timestamp`, `ts`): required, Unix seconds, Unix
 *   milliseconds or an ISO 8601 date; the views are replayed in its order.
 * - `title`, `description`, `category`: optional (at most 500, 2000 and 200
 *   characters: what tracking accepts).
 * - `themes`: optional, separated by `|`.
 * - `published_time` (also `published`): optional, Unix seconds or an ISO 8601 date.
 *
 * Other columns are ignored (and named in the summary). A bad row stops the
 * run with its line and column (exit 2) unless `--skip-bad` is given: then
 * it is counted, reported and left out.
 *
 * Options: --log (required), --eval-readers (default 1000, capped at the
 * readers with at least two views), --concurrency (default 32), --seed
 * (default 1), --weights=covisit:1,content:0.35,... (the measured block's
 * weights; the others keep their defaults), --skip-bad.
 */
import { createReadStream } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { ImportFailure, readCsv } from '../shared/imports/csv.js';
import { toUnixSeconds } from '../shared/recos/dates.js';
import { BLOCK_DEFAULTS } from '../shared/recos/settings.js';
import type { Weights } from '../shared/recos/types.js';
import { articleGuid, canonicalUrl } from '../shared/recos/urls.js';
import { formatResult, K, replayAndEvaluate, type LogView, type ReplayResult } from './recos-replay.js';

/** Bad input (the file, a row or an option): the message says where; exit code 2. */
export class LogError extends Error {
  constructor(message: string, readonly usage = false) {
    super(message);
  }
}

type Field = 'reader_id' | 'url' | 'time' | 'title' | 'description' | 'category' | 'themes' | 'published_time';

/** Accepted header names of each column (compared lower-cased, with spaces and dashes as `_`). */
export const COLUMNS: Record<Field, string[]> = {
  reader_id: ['reader_id', 'user_id', 'reader', 'user'],
  url: ['url', 'page_url'],
  time: ['time', 'timestamp', 'ts'],
  title: ['title'],
  description: ['description'],
  category: ['category'],
  themes: ['themes'],
  published_time: ['published_time', 'published'],
};
const REQUIRED: Field[] = ['reader_id', 'url', 'time'];
/** What tracking accepts (shared/recos/schemas.ts); a longer value would be refused there, so it is refused here. */
const MAX_LENGTH = { reader_id: 128, url: 2048, title: 500, description: 2000, category: 200, theme: 64 };
const MAX_THEMES = 20;
/** The blend's weights (shared/recos/settings.ts DEFAULT_WEIGHTS). */
export const WEIGHT_NAMES: Array<keyof Weights> = ['covisit', 'content', 'preferences', 'popularity', 'freshness'];
/** Rows skipped with --skip-bad that are listed one by one (the rest are counted). */
const SHOWN_SKIPS = 10;

export interface ParsedLog {
  /** Sorted by time (stable: rows with the same time keep the file's order); URLs canonical. */
  views: LogView[];
  /** Data rows read (blank lines aside), skipped ones included. */
  rows: number;
  /** Rows left out with --skip-bad: physical line and reason. */
  skipped: Array<{ line: number; message: string }>;
  /** Header cells that are not one of the columns. */
  ignoredColumns: string[];
  /** Whether the rows were out of time order in the file. */
  reordered: boolean;
}

const normaliseHeader = (cell: string) => cell.trim().toLowerCase().replace(/[\s-]+/g, '_');
const show = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}…` : value);
const newlines = (cells: string[]) => cells.reduce((n, c) => n + (c.match(/\r\n|\r|\n/g)?.length ?? 0), 0);

/** ISO 8601 dates as exports write them: a date, optionally a time (`T` or a space), optionally fractions and a zone. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Unix seconds (fractions kept: only the order matters) from Unix seconds,
 * Unix milliseconds (values above 10^11) or an ISO 8601 date; undefined for
 * anything else.
 */
export function parseTime(raw: string): number | undefined {
  const text = raw.trim();
  if (/^\d{1,16}(\.\d{1,9})?$/.test(text)) {
    const n = Number(text);
    return n > 1e11 ? n / 1000 : n;
  }
  if (!ISO_8601.test(text)) return undefined;
  const ms = Date.parse(text.replace(',', '.'));
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** Unix seconds, read by the service's own rule for `published_time` (shared/recos/dates.ts: exact over 1970..9999); undefined otherwise. */
function parsePublished(raw: string): number | undefined {
  return toUnixSeconds(raw.trim());
}

/** Maps the header cells to columns; a missing required column or a column given twice: LogError. */
function readHeader(cells: string[], name: string): { index: Partial<Record<Field, number>>; ignored: string[] } {
  const index: Partial<Record<Field, number>> = {};
  const ignored: string[] = [];
  cells.forEach((cell, i) => {
    const header = normaliseHeader(i === 0 ? cell.replace(/^\uFEFF/, '') : cell);
    const field = (Object.keys(COLUMNS) as Field[]).find((f) => COLUMNS[f].includes(header));
    if (field === undefined) {
      if (cell.trim() !== '') ignored.push(cell.trim());
      return;
    }
    if (index[field] !== undefined) throw new LogError(`${name} line 1: columns ${show(cells[index[field]].trim())} and ${show(cell.trim())} are both ${field}: keep one`);
    index[field] = i;
  });
  const missing = REQUIRED.filter((f) => index[f] === undefined);
  if (missing.length > 0) {
    const described = missing.map((f) => `${f} (or ${COLUMNS[f].slice(1).join(', ')})`).join(', ');
    const found = cells.map((c) => show(c.trim())).join(', ');
    const hint = cells.some((c) => /^https?:\/\//i.test(c.trim())) ? '; the first line looks like data: the header line is required' : '';
    throw new LogError(`${name} line 1: no ${missing.length === 1 ? 'column' : 'columns'} ${described}; the header has ${found || 'no columns'}${hint}`);
  }
  return { index, ignored };
}

/** One data row → a view, or the reason it is bad (naming the column). */
function readRow(cells: string[], index: Partial<Record<Field, number>>, width: number): LogView | string {
  const extra = cells.slice(width);
  if (cells.length < width || extra.some((c) => c.trim() !== '')) return `${cells.length} fields where the header has ${width} (a delimiter or a quote missing or extra?)`;
  const get = (f: Field) => (index[f] === undefined ? '' : cells[index[f]].trim());

  const reader = get('reader_id');
  if (reader === '') return 'reader_id is empty';
  if (reader.length > MAX_LENGTH.reader_id) return `reader_id ${show(reader)} is longer than ${MAX_LENGTH.reader_id} characters`;
  // eslint-disable-next-line no-control-regex -- refusing control characters is this pattern's purpose (the tracking API refuses them)
  if (/[\u0000-\u001f\u007f]/.test(reader)) return `reader_id ${show(reader)} contains control characters`;

  const rawUrl = get('url');
  if (rawUrl === '') return 'url is empty';
  const url = canonicalUrl(rawUrl);
  if (url === undefined) return `url ${show(rawUrl)} is not an absolute http(s) URL`;
  if (rawUrl.length > MAX_LENGTH.url) return `url ${show(rawUrl)} is longer than ${MAX_LENGTH.url} characters`;

  const rawTime = get('time');
  if (rawTime === '') return 'time is empty';
  const t = parseTime(rawTime);
  if (t === undefined) return `time ${show(rawTime)} is not Unix seconds, Unix milliseconds or an ISO 8601 date`;

  const view: LogView = { reader, url, t };
  for (const [field, key] of [['title', 'title'], ['description', 'desc'], ['category', 'category']] as const) {
    const value = get(field);
    if (value.length > MAX_LENGTH[field]) return `${field} ${show(value)} is longer than ${MAX_LENGTH[field]} characters`;
    if (value !== '') view[key] = value;
  }
  const themes = [...new Set(get('themes').split('|').map((s) => s.trim().toLowerCase()).filter((s) => s !== ''))];
  const long = themes.find((s) => s.length > MAX_LENGTH.theme);
  if (long !== undefined) return `themes: ${show(long)} is longer than ${MAX_LENGTH.theme} characters`;
  if (themes.length > MAX_THEMES) return `themes: ${themes.length} themes, at most ${MAX_THEMES}`;
  if (themes.length > 0) view.themes = themes;
  const rawPublished = get('published_time');
  if (rawPublished !== '') {
    const published = parsePublished(rawPublished);
    if (published === undefined) return `published_time ${show(rawPublished)} is not Unix seconds or an ISO 8601 date`;
    view.published = published;
  }
  return view;
}

/**
 * Parses a page-view log streamed from `source` (or given as text; `name` is
 * how messages call it). Bad input: LogError with the line (physical, the header being line 1)
 * and the column; with `skipBad`, bad rows are returned in `skipped` instead.
 */
export async function parseViewsCsv(source: AsyncIterable<Uint8Array> | string, name: string, o: { skipBad?: boolean } = {}): Promise<ParsedLog> {
  if (typeof source === 'string') source = Readable.from([Buffer.from(source)]);
  let header: { index: Partial<Record<Field, number>>; ignored: string[] } | undefined;
  let width = 0;
  let line = 1;
  let rows = 0;
  let reordered = false;
  const views: LogView[] = [];
  const skipped: ParsedLog['skipped'] = [];
  try {
    for await (const { cells } of readCsv(source)) {
      const at = line;
      line += 1 + newlines(cells);
      if (cells.every((c) => c.trim() === '')) continue;
      if (header === undefined) {
        header = readHeader(cells, name);
        width = cells.length;
        continue;
      }
      rows++;
      const view = readRow(cells, header.index, width);
      if (typeof view === 'string') {
        if (!o.skipBad) throw new LogError(`${name} line ${at}: ${view}`);
        skipped.push({ line: at, message: view });
        continue;
      }
      if (views.length > 0 && view.t < views[views.length - 1].t) reordered = true;
      views.push(view);
    }
  } catch (err) {
    if (err instanceof LogError) throw err;
    if (err instanceof ImportFailure) throw new LogError(`${name}: ${err.message.replace(/; the import stops there$/, '')}`);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new LogError(`${name}: no such file`);
    if (code === 'EISDIR') throw new LogError(`${name}: is a directory, not a CSV file`);
    if (code === 'EACCES') throw new LogError(`${name}: permission denied`);
    throw err;
  }
  if (header === undefined) throw new LogError(`${name}: empty file (a header line naming the columns is required)`);
  if (rows === 0) throw new LogError(`${name}: no views after the header line`);
  if (views.length === 0) throw new LogError(`${name}: all ${rows} rows are bad (first: line ${skipped[0].line}: ${skipped[0].message})`);
  if (reordered) views.sort((a, b) => a.t - b.t);
  return { views, rows, skipped, ignoredColumns: header.ignored, reordered };
}

/** Parses the page-view log at `path` (streamed; see parseViewsCsv). */
export function parseViewsLog(path: string, o: { skipBad?: boolean } = {}): Promise<ParsedLog> {
  // `npm run evaluate` runs in the package's folder: a relative path is the caller's (INIT_CWD).
  const base = process.env.npm_lifecycle_event === 'evaluate' ? process.env.INIT_CWD : undefined;
  return parseViewsCsv(createReadStream(base && !isAbsolute(path) ? resolve(base, path) : path), path, o);
}

export interface LogSummary {
  views: number;
  readers: number;
  articles: number;
  /** Readers with at least two views. */
  readersTwoPlus: number;
  /** Readers the leave-last-out split can use: at least two articles, the last one not the one read just before. */
  evaluable: number;
  /** Share of views taken by the most viewed 1 % of articles (at least one article). */
  topPercentShare: number;
  /** Articles whose published_time is older than the block's maxAgeDays before `now`: never recommended by the service. */
  tooOld: number;
}

/** The figures of a log that say what the evaluation can measure. */
export function summarise(views: LogView[], now = Date.now() / 1000): LogSummary {
  const perArticle = new Map<string, number>();
  const published = new Map<string, number>();
  const perReader = new Map<string, string[]>();
  for (const v of views) {
    const g = articleGuid(v.url);
    perArticle.set(g, (perArticle.get(g) ?? 0) + 1);
    if (v.published !== undefined) published.set(g, Math.max(v.published, published.get(g) ?? 0));
    const list = perReader.get(v.reader) ?? [];
    list.push(g);
    perReader.set(v.reader, list);
  }
  const counts = [...perArticle.values()].sort((a, b) => b - a);
  const top = counts.slice(0, Math.max(1, Math.ceil(counts.length / 100))).reduce((a, b) => a + b, 0);
  const lists = [...perReader.values()];
  return {
    views: views.length,
    readers: perReader.size,
    articles: perArticle.size,
    readersTwoPlus: lists.filter((l) => l.length >= 2).length,
    evaluable: lists.filter((l) => new Set(l).size >= 2 && l[l.length - 1] !== l[l.length - 2]).length,
    topPercentShare: top / Math.max(1, views.length),
    tooOld: [...published.values()].filter((t) => t < now - BLOCK_DEFAULTS.maxAgeDays * 86_400).length,
  };
}

/** `covisit:1,content:0.35` → weights (known names, 0 to 100); anything else: LogError. */
export function parseWeights(text: string): Partial<Weights> {
  const weights: Partial<Weights> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [key, value, ...rest] = pair.split(':').map((s) => s.trim());
    if (!WEIGHT_NAMES.includes(key as keyof Weights)) throw new LogError(`--weights: unknown weight ${show(key)} (known: ${WEIGHT_NAMES.join(', ')})`);
    const n = value === undefined || value === '' || rest.length > 0 ? NaN : Number(value);
    if (!Number.isFinite(n) || n < 0 || n > 100) throw new LogError(`--weights: ${key} must be a number from 0 to 100, not ${show(value ?? '')}`);
    weights[key as keyof Weights] = n;
  }
  if (Object.keys(weights).length === 0) throw new LogError('--weights: no weights given (e.g. --weights=covisit:1,content:0.35)');
  return weights;
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The one-line verdict on hit rate@10: service against most read, with the sampling noise of the difference. */
export function verdict(r: ReplayResult): string {
  const s = r.service.hitRate;
  const m = r.mostRead.hitRate;
  // Rough 95 % margin of the difference of two hit rates over the same n readers (treated as independent: conservative).
  const margin = 1.96 * Math.sqrt((s * (1 - s) + m * (1 - m)) / Math.max(1, r.evaluated));
  const noise = Math.abs(s - m) <= margin ? `; the difference is within sampling noise, ±${(margin * 100).toFixed(1)} points at 95 %` : '';
  const figures = `${pct(s)} vs ${pct(m)}, ${r.evaluated} readers${noise}`;
  if (s > m && m > 0) return `Verdict: the service beats most read by ×${(s / m).toFixed(2)} on hit rate@${K} (${figures})`;
  if (s > m) return `Verdict: the service beats most read on hit rate@${K}, which finds none (${figures})`;
  return `Verdict: the service does not beat most read on hit rate@${K} (${figures})`;
}

const USAGE = `usage: npm run evaluate -- --log views.csv [--eval-readers=1000] [--concurrency=32] [--seed=1] [--weights=covisit:1,content:0.35,...] [--skip-bad]
  columns (header line required): reader_id, url, time (Unix seconds, milliseconds or ISO 8601); optional title, description, category, themes (a|b), published_time (docs/evaluate.md)`;

function integer(args: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const given = args[name];
  if (given === undefined) return fallback;
  const raw = typeof given === 'string' ? given : JSON.stringify(given);
  const n = Number(raw);
  if (!/^-?\d+$/.test(String(raw).trim()) || n < min || n > max) throw new LogError(`--${name} must be an integer from ${min} to ${max}, not ${show(String(raw))}`);
  return n;
}

/** The CLI: returns the exit code (0 the report was printed, 2 bad input or options). */
export async function main(argv: string[], out: (line: string) => void = (line) => console.log(line)): Promise<number> {
  try {
    let args;
    try {
      args = parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
          log: { type: 'string' },
          'eval-readers': { type: 'string' },
          concurrency: { type: 'string' },
          seed: { type: 'string' },
          weights: { type: 'string' },
          'skip-bad': { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
      }).values;
    } catch (err) {
      throw new LogError((err as Error).message, true);
    }
    if (args.help) {
      out(USAGE);
      return 0;
    }
    if (!args.log) throw new LogError('--log is required (the page-view CSV file)', true);
    const evalReaders = integer(args, 'eval-readers', 1000, 1, 1_000_000);
    const concurrency = integer(args, 'concurrency', 32, 1, 1024);
    const seed = integer(args, 'seed', 1, 0, 2 ** 31 - 1);
    const weights = args.weights !== undefined ? parseWeights(args.weights) : undefined;

    const parsed = await parseViewsLog(args.log, { skipBad: args['skip-bad'] });
    const s = summarise(parsed.views);
    out(
      `Log ${args.log}: ${count(s.views, 'view')} by ${count(s.readers, 'reader')} of ${count(s.articles, 'article')}; ${count(s.readersTwoPlus, 'reader')} with ≥ 2 views; ` +
        `the top 1 % of articles take ${pct(s.topPercentShare)} of views`,
    );
    const notes = [
      parsed.skipped.length > 0 ? `${parsed.skipped.length} of ${parsed.rows} rows skipped (--skip-bad)` : '',
      parsed.reordered ? 'rows sorted by time' : '',
      parsed.ignoredColumns.length > 0 ? `columns ignored: ${parsed.ignoredColumns.map(show).join(', ')}` : '',
    ].filter((n) => n !== '');
    if (notes.length > 0) out(`  ${notes.join('; ')}`);
    if (s.tooOld > 0)
      out(
        `  ${s.tooOld} of ${count(s.articles, 'article')} have a published_time more than ${BLOCK_DEFAULTS.maxAgeDays} days ago: the service never recommends those (block setting maxAgeDays) while the baselines do; ` +
          'export a recent window, or leave published_time out (docs/evaluate.md)',
      );
    for (const skip of parsed.skipped.slice(0, SHOWN_SKIPS)) out(`  skipped line ${skip.line}: ${skip.message}`);
    if (parsed.skipped.length > SHOWN_SKIPS) out(`  … and ${parsed.skipped.length - SHOWN_SKIPS} more skipped rows`);
    if (s.evaluable === 0) throw new LogError(`${args.log}: no reader has read two different articles in a row, so there is no last view to hold out and predict`);
    const n = Math.min(evalReaders, s.evaluable);
    out(
      `Evaluating ${n} readers (their last view held out${n < evalReaders ? `; ${s.evaluable} readers have ≥ 2 views and a last article different from the one before` : `, a sample of ${s.evaluable}`}, seed ${seed})` +
        (weights ? `; block weights ${Object.entries(weights).map(([k, v]) => `${k} ${v}`).join(', ')} (others default)` : ''),
    );

    // No warm-up: the tool reports quality, not the replay rate.
    const result = await replayAndEvaluate(parsed.views, { evalReaders: n, concurrency, seed, block: weights ? { weights } : undefined, warmUpSeconds: 0, log: out });
    out('');
    out(formatResult(result, weights ? 'service (--weights)' : undefined));
    out('');
    out(verdict(result));
    return 0;
  } catch (err) {
    if (err instanceof LogError) {
      console.error(err.message);
      if (err.usage) console.error(USAGE);
      return 2;
    }
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Node 20 is what these machines have; the SDK's notice about Node 22 is noise in the report.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.exit(await main(process.argv.slice(2)));
}
