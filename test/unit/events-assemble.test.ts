import { describe, expect, it } from 'vitest';
import { assembleEvents } from '../../shared/events/assemble.js';
import { duplicateFilter, sourceDigest } from '../../shared/events/build.js';
import { MAX_CATCH_UP_DAYS, runDailyAssembly } from '../../shared/events/daily.js';
import { mergeSorted, splitLines, timedLines, type TimedLine } from '../../shared/events/merge.js';
import { eventPaths } from '../../shared/events/paths.js';
import type { EventStore } from '../../shared/events/store.js';
import { asyncIterable } from '../helpers/async-iterable.js';
import { memoryStore } from '../helpers/memory-event-store.js';

const day = '2026-03-04';
const at = (s: number) => new Date(Date.parse(`${day}T00:00:00.000Z`) + s * 1000).toISOString();
const raw = (name: string) => `${eventPaths.raw('acme', 'nl_send', day)}${name}.jsonl`;

/** A source yielding its items in batches of two (so batch edges are exercised). */
function fromArray(items: TimedLine[]) {
  return asyncIterable((function* () {
    for (let i = 0; i < items.length; i += 2) yield items.slice(i, i + 2);
  })());
}

describe('mergeSorted', () => {
  it('merges sorted sources into date order, equal dates in source order', async () => {
    const a = [{ at: 1, line: 'a1' }, { at: 3, line: 'a3' }, { at: 3, line: 'a3b' }];
    const b = [{ at: 0, line: 'b0' }, { at: 3, line: 'b3' }];
    const c: TimedLine[] = [];
    const out: string[] = [];
    for await (const batch of mergeSorted([fromArray(a), fromArray(b), fromArray(c)])) out.push(...batch.map((item) => item.line));
    expect(out).toEqual(['b0', 'a1', 'a3', 'a3b', 'b3']);
  });

  it('splits chunked bytes into lines, including a last line without LF and CRLF ends', async () => {
    const chunks = ['{"date":"2026-01-01T00:00:00Z"}\r', '\n\n{"da', 'te":"2026-01-01T00:00:01Z"}'];
    const lines: string[] = [];
    for await (const batch of splitLines(asyncIterable(chunks.map((c) => Buffer.from(c))))) lines.push(...batch);
    expect(lines).toEqual(['{"date":"2026-01-01T00:00:00Z"}', '{"date":"2026-01-01T00:00:01Z"}']);
  });

  it('refuses a streamed source that goes back in time', async () => {
    const lines = asyncIterable([[JSON.stringify({ date: at(5) })], [JSON.stringify({ date: at(4) })]]);
    await expect(async () => {
      for await (const _ of timedLines(lines, 'k')) void _;
    }).rejects.toThrow(/k is not sorted/);
  });
});

describe('assembleEvents', () => {
  it('merges many raw objects through intermediate runs with at most fanIn open at once, sorted, and cleans up', async () => {
    const { store, put, text, objects, stats } = memoryStore();
    const expected: Array<{ s: number; email: string }> = [];
    for (let o = 0; o < 23; o++) {
      const lines = Array.from({ length: 5 }, (_, i) => ({ s: (o * 37 + i * 1009) % 86400, email: `u${o}-${i}@x.io` })).sort((x, y) => x.s - y.s);
      expected.push(...lines);
      put(raw(`o${String(o).padStart(3, '0')}`), lines.map((l) => ({ date: at(l.s), email: l.email, campaign_id: 'c' })));
    }
    const result = await assembleEvents(store, 'acme', 'nl_send', day, { fanIn: 3 });
    expect(result).toMatchObject({ events: 115, rawObjects: 23, upToDate: false, key: eventPaths.file('acme', 'nl_send', day) });
    expect(stats.maxOpen).toBeLessThanOrEqual(3);
    const rows = text(result.key!)!.split('\r\n');
    expect(rows[0]).toBe('date,email,campaign_id,newsletter_id,email_list_id');
    const dates = rows.slice(1, -1).map((r) => r.split(',')[0]);
    expect(dates).toEqual([...dates].sort());
    expect(rows.slice(1, -1).map((r) => r.split(',')[1]).sort()).toEqual(expected.map((e) => e.email).sort());
    expect([...objects.keys()].filter((k) => k.startsWith('tmp/'))).toEqual([]);
  });

  it('drops repeated lines of a redelivered notification (same hidden id), also through intermediate runs, and never shows the id', async () => {
    const { store, put, text } = memoryStore();
    const line = (s: number, email: string, id?: string) => ({ date: at(s), email, campaign_id: 'c', ...(id ? { _id: id } : {}) });
    // Batch 1, its redelivery in two later batches (split differently), and lines without an id (all kept).
    put(raw('b1'), [line(1, 'a@x.io', 'm1:0'), line(1, 'b@x.io', 'm1:1'), line(2, 'c@x.io', 'm2:0'), line(5, 'same@x.io'), line(5, 'same@x.io')]);
    put(raw('b2'), [line(1, 'b@x.io', 'm1:1'), line(1, 'z@x.io', 'm9:0'), line(2, 'c@x.io', 'm2:0')]);
    put(raw('b3'), [line(0, 'first@x.io', 'm0:0'), line(1, 'a@x.io', 'm1:0'), line(1, 'b@x.io', 'm1:1')]);
    for (const fanIn of [2, 32]) {
      const result = await assembleEvents(store, 'acme', 'nl_send', day, { fanIn, force: true });
      expect(result.events).toBe(7);
      const rows = text(result.key!)!.split('\r\n').slice(1, -1);
      expect(rows.map((r) => r.split(',')[1])).toEqual(['first@x.io', 'a@x.io', 'b@x.io', 'z@x.io', 'c@x.io', 'same@x.io', 'same@x.io']);
      expect(text(result.key!)).not.toContain('m1');
    }
  });

  it('sorts small raw objects that were written unsorted', async () => {
    const { store, put, text } = memoryStore();
    put(raw('a'), [{ date: at(30), email: 'late@x.io' }, { date: at(10), email: 'early@x.io' }]);
    const result = await assembleEvents(store, 'acme', 'nl_send', day);
    expect(text(result.key!)).toBe(`date,email,campaign_id,newsletter_id,email_list_id\r\n${day} 00:00:10,early@x.io,,,\r\n${day} 00:00:30,late@x.io,,,\r\n`);
  });

  it('is idempotent: a re-run keeps the file; a late raw object makes the next run rebuild it identically plus the new line', async () => {
    const { store, put, text, stats } = memoryStore();
    put(raw('a'), [{ date: at(1), email: 'a@x.io' }, { date: at(5), email: 'tie1@x.io' }]);
    put(raw('b'), [{ date: at(5), email: 'tie2@x.io' }]);
    const first = await assembleEvents(store, 'acme', 'nl_send', day);
    const before = text(first.key!);
    const again = await assembleEvents(store, 'acme', 'nl_send', day);
    expect(again.upToDate).toBe(true);
    expect(stats.writes.filter((k) => k === first.key)).toHaveLength(1);
    const forced = await assembleEvents(store, 'acme', 'nl_send', day, { force: true });
    expect(forced.upToDate).toBe(false);
    expect(text(first.key!)).toBe(before);
    put(raw('c-late'), [{ date: at(3), email: 'late@x.io' }]);
    const rebuilt = await assembleEvents(store, 'acme', 'nl_send', day);
    expect(rebuilt).toMatchObject({ upToDate: false, events: 4 });
    expect(text(first.key!)!.split('\r\n').map((r) => r.split(',')[1])).toEqual(['email', 'a@x.io', 'late@x.io', 'tie1@x.io', 'tie2@x.io', undefined]);
  });

  it("builds an open day's running file apart, and drops it once the day's file is built", async () => {
    const { store, put, objects } = memoryStore();
    put(raw('a'), [{ date: at(1), email: 'a@x.io' }]);
    const partial = await assembleEvents(store, 'acme', 'nl_send', day, { target: 'partial' });
    expect(partial.key).toBe(eventPaths.partial('acme', 'nl_send', day));
    expect(objects.has(partial.key!)).toBe(true);
    expect(objects.has(eventPaths.file('acme', 'nl_send', day))).toBe(false);
    await assembleEvents(store, 'acme', 'nl_send', day);
    expect(objects.has(partial.key!)).toBe(false);
    expect(objects.has(eventPaths.file('acme', 'nl_send', day))).toBe(true);
  });

  it('fails, naming the object and writing no file, when a large raw object is not sorted', async () => {
    const { store, put, objects } = memoryStore();
    const padding = 'x'.repeat(300);
    const lines = Array.from({ length: 1200 }, (_, i) => ({ date: at(i), email: `u${i}@x.io`, campaign_id: padding }));
    [lines[600], lines[601]] = [lines[601], lines[600]];
    put(raw('big'), lines);
    put(raw('small'), [{ date: at(5), email: 's@x.io' }]);
    await expect(assembleEvents(store, 'acme', 'nl_send', day)).rejects.toThrow(`Source ${raw('big')} is not sorted by date`);
    expect([...objects.keys()].filter((k) => !k.startsWith('raw/'))).toEqual([]);
  });

  it('writes nothing for a day without raw records', async () => {
    const { store, objects } = memoryStore();
    const result = await assembleEvents(store, 'acme', 'nl_click', day);
    expect(result.key).toBeUndefined();
    expect(result.rawObjects).toBe(0);
    expect(objects.size).toBe(0);
    expect(sourceDigest([])).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('duplicateFilter', () => {
  it('keeps the ids of one instant only: the same id at another instant is not a duplicate', () => {
    const duplicate = duplicateFilter();
    expect([duplicate(1, { _id: 'a' }), duplicate(1, { _id: 'a' }), duplicate(1, { _id: 'b' }), duplicate(2, { _id: 'a' }), duplicate(2, {}), duplicate(2, {})]).toEqual([
      false,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('timeOf', () => {
  it('reads the date at the start of a line written by recordEvents, and any other line by parsing it', async () => {
    const { timeOf } = await import('../../shared/events/merge.js');
    expect(timeOf('{"date":"2026-01-02T03:04:05.006Z","email":"a@x.io"}')).toBe(Date.parse('2026-01-02T03:04:05.006Z'));
    expect(timeOf('{"email":"a@x.io","date":"2026-01-02T03:04:05.006Z"}')).toBe(Date.parse('2026-01-02T03:04:05.006Z'));
    expect(() => timeOf('{"email":"a@x.io"}')).toThrow(/without a valid date/);
  });
});

describe('scheduled runs catch up on the runs that did not happen', () => {
  const run = (store: EventStore, now: string) => runDailyAssembly(store, { time: `${now}T00:15:00.000Z` });

  it('first run: yesterday and the 3 days before; then only what is new, plus the late days', async () => {
    const { store } = memoryStore();
    expect((await run(store, '2026-03-10')).days).toEqual(['2026-03-09', '2026-03-08', '2026-03-07', '2026-03-06']);
    expect((await run(store, '2026-03-11')).days).toEqual(['2026-03-10', '2026-03-09', '2026-03-08', '2026-03-07']);
  });

  it('after 10 days without a run (the service was down), the next run assembles every missed day', async () => {
    const { store } = memoryStore();
    await run(store, '2026-03-10');
    const days = (await run(store, '2026-03-20')).days;
    expect(days[0]).toBe('2026-03-19');
    expect(days.at(-1)).toBe('2026-03-10');
    expect(days).toHaveLength(10);
  });

  it('goes back at most MAX_CATCH_UP_DAYS; a run by hand for one day does not move the mark', async () => {
    const { store } = memoryStore();
    await run(store, '2026-01-01');
    await runDailyAssembly(store, { date: '2026-03-01' });
    expect((await run(store, '2026-06-01')).days).toHaveLength(MAX_CATCH_UP_DAYS + 1);
  });
});
