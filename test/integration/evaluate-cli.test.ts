import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LogError, parseTime, parseViewsCsv, parseViewsLog, parseWeights, summarise, verdict } from '../../bench/evaluate.js';
import type { Metrics, ReplayResult } from '../../bench/recos-replay.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const example = resolve(root, 'bench/fixtures/example-views.csv');

/** The LogError message of parsing `text` as views.csv. */
async function failure(text: string, o: { skipBad?: boolean } = {}): Promise<string> {
  const err = await parseViewsCsv(text, 'views.csv', o).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LogError);
  return (err as LogError).message;
}

describe('evaluate CLI: the page-view log parser', () => {
  it('parses the example log: every row, canonical URLs, themes split on |', async () => {
    const log = await parseViewsLog(example);
    expect(log.rows).toBe(30);
    expect(log.views).toHaveLength(30);
    expect(log.skipped).toEqual([]);
    expect(log.ignoredColumns).toEqual([]);
    expect(log.reordered).toBe(false);
    expect(log.views[0]).toEqual({
      reader: 'r01',
      url: 'https://news.example/politics/budget-vote-tonight',
      t: Date.parse('2026-11-20T07:02:11Z') / 1000,
      title: 'Budget vote tonight',
      category: 'politics',
      themes: ['budget', 'city council'],
    });
    // The campaign parameter goes, as tracking does it; a quoted title keeps its quotes.
    expect(log.views[4].url).toBe('https://news.example/politics/budget-vote-tonight');
    expect(log.views[5].title).toBe('Coach: "We are ready"');
    expect(summarise(log.views)).toEqual({ views: 30, readers: 10, articles: 11, readersTwoPlus: 10, evaluable: 9, topPercentShare: 4 / 30, tooOld: 0 });
  });

  it('reads published_time (Unix seconds or ISO 8601) and counts the articles older than the block keeps', async () => {
    const log = await parseViewsCsv('reader_id,url,time,published\nr1,https://news.example/a,1,2026-11-20T06:00:00Z\nr1,https://news.example/b,2,1795154400\nr2,https://news.example/c,3,\n', 'views.csv');
    expect(log.views.map((v) => v.published)).toEqual([1795154400, 1795154400, undefined]);
    expect(summarise(log.views, 1795154400 + 86_400).tooOld).toBe(0);
    expect(summarise(log.views, 1795154400 + 31 * 86_400).tooOld).toBe(2);
  });

  it('accepts aliases in any case, Unix seconds, milliseconds and ISO 8601, and sorts the rows by time', async () => {
    const log = await parseViewsCsv(
      '\uFEFFUser_ID;Page URL;Timestamp;Section;Themes\r\n' +
        'b;https://news.example/2;1795158000500;;\r\n' +
        'a;https://news.example/1;1795158000;x;A| b |\r\n' +
        '\r\n' +
        'c;https://news.example/3;2026-11-20T07:00:00.250+00:00;;\r\n',
      'views.csv',
    );
    expect(log.views.map((v) => [v.reader, v.t])).toEqual([
      ['a', 1795158000],
      ['c', 1795158000.25],
      ['b', 1795158000.5],
    ]);
    expect(log.views[0].themes).toEqual(['a', 'b']);
    expect(log.reordered).toBe(true);
    expect(log.ignoredColumns).toEqual(['Section']);
    expect(parseTime('2026-11-20 07:00:00Z')).toBe(1795158000);
    expect(parseTime('20/11/2026')).toBeUndefined();
    expect(parseTime('Fri Nov 20 2026')).toBeUndefined();
  });

  it('names a missing required column, every missing one, and a column given twice', async () => {
    expect(await failure('reader_id,url,title\nr1,https://news.example/a,A\n')).toBe('views.csv line 1: no column time (or timestamp, ts); the header has "reader_id", "url", "title"');
    expect(await failure('who,url\nr1,https://news.example/a\n')).toMatch(/^views\.csv line 1: no columns reader_id \(or user_id, reader, user\), time \(or timestamp, ts\); /);
    expect(await failure('r1,https://news.example/a,1795158000\n')).toMatch(/the first line looks like data: the header line is required$/);
    expect(await failure('user_id,reader_id,url,time\n')).toBe('views.csv line 1: columns "user_id" and "reader_id" are both reader_id: keep one');
    expect(await failure('')).toBe('views.csv: empty file (a header line naming the columns is required)');
    expect(await failure('reader_id,url,time\n')).toBe('views.csv: no views after the header line');
  });

  it('names the line and the column of a bad time, counting the lines a quoted field spans', async () => {
    const head = 'reader_id,url,time,title\nr1,https://news.example/a,1795158000,"Two\nlines"\n';
    expect(await failure(`${head}r2,https://news.example/b,abc,B\n`)).toBe('views.csv line 4: time "abc" is not Unix seconds, Unix milliseconds or an ISO 8601 date');
    expect(await failure(`${head}r2,https://news.example/b,,B\n`)).toBe('views.csv line 4: time is empty');
    expect(await failure(`${head}r2,https://news.example/b,1795158000\n`)).toBe('views.csv line 4: 3 fields where the header has 4 (a delimiter or a quote missing or extra?)');
    expect(await failure('reader_id,url,time,published_time\nr1,https://news.example/a,1795158000,soon\n')).toBe('views.csv line 2: published_time "soon" is not Unix seconds or an ISO 8601 date');
  });

  it('refuses a row whose URL is not absolute http(s); --skip-bad leaves it out and reports it', async () => {
    const text = 'reader_id,url,time\nr1,https://news.example/a,1795158000\nr1,ftp://news.example/b,1795158001\nr2,/relative/c,1795158002\nr2,https://news.example/d,1795158003\n';
    expect(await failure(text)).toBe('views.csv line 3: url "ftp://news.example/b" is not an absolute http(s) URL');
    const log = await parseViewsCsv(text, 'views.csv', { skipBad: true });
    expect(log.rows).toBe(4);
    expect(log.views.map((v) => v.url)).toEqual(['https://news.example/a', 'https://news.example/d']);
    expect(log.skipped).toEqual([
      { line: 3, message: 'url "ftp://news.example/b" is not an absolute http(s) URL' },
      { line: 4, message: 'url "/relative/c" is not an absolute http(s) URL' },
    ]);
    expect(await failure('reader_id,url,time\nr1,mailto:x@news.example,1\n', { skipBad: true })).toBe('views.csv: all 1 rows are bad (first: line 2: url "mailto:x@news.example" is not an absolute http(s) URL)');
  });

  it('parses --weights and refuses unknown signals or values out of range', () => {
    expect(parseWeights('covisit:1, content:0.35')).toEqual({ covisit: 1, content: 0.35 });
    expect(() => parseWeights('covisits:1')).toThrow('--weights: unknown weight "covisits" (known: covisit, content, preferences, popularity, freshness)');
    expect(() => parseWeights('content:-1')).toThrow('--weights: content must be a number from 0 to 100, not "-1"');
  });

  it('says whether the service beats most read, by how much, and when the difference is noise', () => {
    const m = (hitRate: number): Metrics => ({ hitRate, ndcg: 0, mrr: 0, coverage: 0 });
    const result = (service: number, mostRead: number, evaluated: number) => ({ service: m(service), mostRead: m(mostRead), covisitation: m(0), evaluated }) as ReplayResult;
    expect(verdict(result(0.3, 0.1, 1000))).toBe('Verdict: the service beats most read by ×3.00 on hit rate@10 (30.0 % vs 10.0 %, 1000 readers)');
    expect(verdict(result(0.1, 0.12, 1000))).toMatch(/^Verdict: the service does not beat most read on hit rate@10 \(10\.0 % vs 12\.0 %, 1000 readers; the difference is within sampling noise, ±2\.7 points at 95 %\)$/);
  });

  it('runs end to end on the example log: exit 0, the summary, the table and a verdict', { timeout: 120_000 }, async () => {
    const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), ['bench/evaluate.ts', '--log', 'bench/fixtures/example-views.csv', '--eval-readers=5'], { cwd: root, env: process.env });
    expect(stdout).toContain('Log bench/fixtures/example-views.csv: 30 views by 10 readers of 11 articles; 10 readers with ≥ 2 views');
    expect(stdout).toContain('| method                     | hit@10  | nDCG@10 | MRR@10 | coverage | vs co-visitation |');
    expect(stdout).toMatch(/^\| most read \(offline\) /m);
    expect(stdout).toMatch(/^5 readers evaluated/m);
    expect(stdout).toMatch(/^Verdict: the service (beats most read by ×\d+\.\d\d|beats most read|does not beat most read) on hit rate@10 \(/m);
  });

  it('exits 2 with the message on bad input', { timeout: 60_000 }, async () => {
    const err = await run(resolve(root, 'node_modules/.bin/tsx'), ['bench/evaluate.ts', '--log', 'bench/fixtures/no-such-views.csv'], { cwd: root, env: process.env }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toContain('bench/fixtures/no-such-views.csv: no such file');
  });
});
