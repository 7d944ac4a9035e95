import { describe, expect, it } from 'vitest';
import { assembleEvents } from '../../shared/events/assemble.js';
import { planConcat, type ConcatPiece } from '../../shared/events/concat-plan.js';
import { runDailyAssembly } from '../../shared/events/daily.js';
import { SUPERSEDED_GRACE_MS } from '../../shared/events/hours.js';
import { closedHours, runHourlyAssembly } from '../../shared/events/hourly.js';
import { eventPaths } from '../../shared/events/paths.js';
import { memoryStore } from '../helpers/memory-event-store.js';

const day = '2026-03-04';
const at = (h: number, s = 0, ms = 0) => new Date(Date.parse(`${day}T00:00:00.000Z`) + h * 3_600_000 + s * 1000 + ms).toISOString();
const rawKey = (hour: string, name: string) => `${eventPaths.rawHour('acme', 'nl_click', day, hour)}${name}.jsonl`;
const hh = (h: number) => String(h).padStart(2, '0');

/**
 * A day of clicks as recordEvents writes them: per hour 4 objects of 6 sorted lines; objects 0, 2 and 3 share
 * their instants (ties across objects), 3 repeats 2's lines (a redelivery: same hidden ids), 1 holds formula cells.
 */
function busyDay(put: (key: string, lines: object[]) => void, hours = [0, 3, 4, 9, 13, 23]) {
  for (const h of hours) {
    for (let o = 0; o < 4; o++) {
      const source = o === 3 ? 2 : o;
      const lines = Array.from({ length: 6 }, (_, i) => ({
        date: at(h, (i * 613) % 3600, o === 1 ? 250 : 5),
        email: `${o === 1 ? '=' : ''}u${h}-${source}-${i}@x.io`,
        target_url: o === 1 ? '+cmd' : `https://x.io/${i},${source}`,
        ...(o >= 2 ? { _id: `m${h}:${i}` } : {}),
      })).sort((a, b) => Date.parse(a.date) - Date.parse(b.date));
      put(rawKey(hh(h), `o${o}`), lines);
    }
  }
}

describe('planConcat', () => {
  it('makes every part but the last at least minPart, copies large stretches, tops small parts up, and loses no byte', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 200; round++) {
      const minPart = 10 + Math.floor(random() * 40);
      const pieces: ConcatPiece[] = [{ text: 'h'.repeat(Math.floor(random() * 5)) }];
      for (let i = 0; i < 1 + Math.floor(random() * 12); i++) pieces.push({ key: `k${i}`, size: Math.floor(random() * 4 * minPart) });
      const parts = planConcat(pieces, { minPart, maxPart: 3 * minPart });
      parts.forEach((p, i) => {
        if (i < parts.length - 1) expect(p.size).toBeGreaterThanOrEqual(minPart);
        if ('copy' in p) expect(p.size).toBeLessThanOrEqual(3 * minPart);
        else expect(p.size).toBeLessThan(2 * minPart);
      });
      // The parts, laid end to end, are the pieces laid end to end.
      const expected = pieces.flatMap((p) => ('text' in p ? [...p.text] : Array.from({ length: p.size }, (_, b) => `${p.key}:${b}`)));
      const got = parts.flatMap((p) =>
        ('copy' in p ? [p.copy] : p.segments).flatMap((s) => ('text' in s ? [...s.text] : Array.from({ length: s.end - s.start }, (_, b) => `${s.key}:${s.start + b}`))),
      );
      expect(got).toEqual(expected);
    }
  });

  it('copies a large object whole when nothing is pending, and makes one part of small pieces', () => {
    expect(planConcat([{ key: 'a', size: 100 }, { key: 'b', size: 3 }], { minPart: 10 })).toEqual([
      { copy: { key: 'a', start: 0, end: 100 }, size: 100 },
      { segments: [{ key: 'b', start: 0, end: 3 }], size: 3 },
    ]);
    expect(planConcat([{ text: 'abc' }, { key: 'a', size: 4 }], { minPart: 10 })).toEqual([{ segments: [{ text: 'abc' }, { key: 'a', start: 0, end: 4 }], size: 7 }]);
    expect(planConcat([{ text: '' }, { key: 'a', size: 0 }])).toEqual([]);
  });
});

describe('assembling a day by hours', () => {
  it('gives byte for byte the file of a whole-day assembly, in both variants, and builds only the hours out of date', async () => {
    const { store, put, text, stats } = memoryStore();
    busyDay(put);
    for (const variant of ['safe', 'raw'] as const) {
      const whole = await assembleEvents(store, 'acme', 'nl_click', day, { variant, method: 'whole', fanIn: 3, target: 'partial' });
      const expected = text(whole.key!)!;
      const byHours = await assembleEvents(store, 'acme', 'nl_click', day, { variant, fanIn: 3, force: true });
      expect(byHours).toMatchObject({ events: whole.events, hoursBuilt: ['00', '03', '04', '09', '13', '23'], rawObjectsRead: 24 });
      expect(text(byHours.key!)).toBe(expected);
      expect(expected.split('\r\n')).toHaveLength(1 + whole.events! + 1);
    }
    // A late record of hour 04: only that hour is read again.
    put(rawKey('04', 'late'), [{ date: at(4, 1800), email: 'late@x.io' }]);
    stats.reads.length = 0;
    const again = await assembleEvents(store, 'acme', 'nl_click', day);
    expect(again).toMatchObject({ hoursBuilt: ['04'], rawObjectsRead: 5, upToDate: false });
    expect(new Set(stats.reads.filter((k) => k.startsWith('raw/')).map((k) => k.split('/')[4]))).toEqual(new Set(['04']));
    expect(text(again.key!)).toContain('late@x.io');
    const whole = await assembleEvents(store, 'acme', 'nl_click', day, { method: 'whole', target: 'partial' });
    expect(text(again.key!)).toBe(text(whole.key!));
  });

  it('the daily job builds the day in both variants, reading each raw object once, each byte for byte its whole-day merge', async () => {
    const { store, put, text, stats } = memoryStore();
    busyDay(put);
    const run = await runDailyAssembly(store, { date: day, clients: ['acme'] });
    expect(run.files).toEqual([
      expect.objectContaining({ key: eventPaths.file('acme', 'nl_click', day), upToDate: false, hoursBuilt: ['00', '03', '04', '09', '13', '23'], raw: { key: eventPaths.file('acme', 'nl_click', day, 'raw'), upToDate: false } }),
    ]);
    const rawReads = stats.reads.filter((k) => k.startsWith('raw/'));
    expect(rawReads).toHaveLength(24);
    expect(new Set(rawReads).size).toBe(24);
    for (const variant of ['safe', 'raw'] as const) {
      const whole = await assembleEvents(store, 'acme', 'nl_click', day, { variant, method: 'whole', target: 'partial' });
      expect(text(eventPaths.file('acme', 'nl_click', day, variant))).toBe(text(whole.key!));
    }
    // Both up to date: the next run reads nothing.
    stats.reads.length = 0;
    const again = await runDailyAssembly(store, { date: day, clients: ['acme'] });
    expect(again.files).toEqual([expect.objectContaining({ upToDate: true, raw: expect.objectContaining({ upToDate: true }) as unknown })]);
    expect(stats.reads).toEqual([]);
  });

  it('assembles a day holding raw objects written before hours existed in one merge', async () => {
    const { store, put, text, objects } = memoryStore();
    put(rawKey('10', 'new'), [{ date: at(10), email: 'b@x.io' }]);
    put(`${eventPaths.raw('acme', 'nl_click', day)}old.jsonl`, [{ date: at(11), email: 'c@x.io' }, { date: at(2), email: 'a@x.io' }]);
    const result = await assembleEvents(store, 'acme', 'nl_click', day);
    expect(result).toMatchObject({ events: 3, hoursBuilt: [], rawObjectsRead: 2 });
    expect(text(result.key!)!.split('\r\n').map((l) => l.split(',')[1])).toEqual(['email', 'a@x.io', 'b@x.io', 'c@x.io', undefined]);
    expect([...objects.keys()].filter((k) => k.startsWith('hours'))).toEqual([]);
  });
});

describe('the hourly job', () => {
  const time = (h: number, m: number) => new Date(Date.parse(`${day}T00:00:00.000Z`) + h * 3_600_000 + m * 60_000).toISOString();

  it('closes an hour HOUR_SETTLE_MINUTES after its end', () => {
    expect(closedHours(day, Date.parse(time(10, 4)))).toEqual(['00', '01', '02', '03', '04', '05', '06', '07', '08']);
    expect(closedHours(day, Date.parse(time(10, 5))).at(-1)).toBe('09');
    expect(closedHours(day, Date.parse(time(24, 5)))).toHaveLength(24);
  });

  it('builds the closed hours of today in both variants, then only hours that late records changed; the day before during the first hour', async () => {
    const { store, put, objects, stats } = memoryStore();
    busyDay(put);
    const first = await runHourlyAssembly(store, { time: time(10, 5), clients: ['acme'] });
    expect(first.days).toEqual([day]);
    expect(first.built).toEqual([{ clientId: 'acme', event: 'nl_click', day, hours: ['00', '03', '04', '09'], rawObjectsRead: 16 }]);
    for (const prefix of ['hours', 'hours-raw']) {
      const keys = [...objects.keys()].filter((k) => k.startsWith(`${prefix}/`));
      expect(keys.filter((k) => k.endsWith('.csv')).map((k) => k.split('/').at(-1)!.slice(0, 2))).toEqual(['00', '03', '04', '09']);
      expect(keys.filter((k) => k.endsWith('.events'))).toHaveLength(4);
    }
    expect((await runHourlyAssembly(store, { time: time(11, 5), clients: ['acme'] })).built).toEqual([]);

    put(rawKey('03', 'late'), [{ date: at(3, 10), email: 'late@x.io' }]);
    stats.reads.length = 0;
    const late = await runHourlyAssembly(store, { time: time(14, 5), clients: ['acme'] });
    expect(late.built).toEqual([{ clientId: 'acme', event: 'nl_click', day, hours: ['03', '13'], rawObjectsRead: 9 }]);
    expect(new Set(stats.reads.filter((k) => k.startsWith('raw/')).map((k) => k.split('/')[4]))).toEqual(new Set(['03', '13']));
    // The replaced rows of hour 03 stay for the grace (a file being stitched may be copying them), then go.
    const hour03 = () => [...objects.keys()].filter((k) => k.startsWith(`${eventPaths.hours('acme', 'nl_click', day)}03-`));
    expect(hour03()).toHaveLength(4);
    await runHourlyAssembly(store, { time: time(15, 5), clients: ['acme'] }, new Date(Date.now() + SUPERSEDED_GRACE_MS));
    expect(hour03()).toHaveLength(2);

    const midnight = await runHourlyAssembly(store, { time: `2026-03-05T00:05:00.000Z`, clients: ['acme'] });
    expect(midnight.days).toEqual([day, '2026-03-05']);
    expect(midnight.built).toEqual([{ clientId: 'acme', event: 'nl_click', day, hours: ['23'], rawObjectsRead: 4 }]);
    // The day's file is then its header and the hours: nothing read.
    stats.reads.length = 0;
    const file = await assembleEvents(store, 'acme', 'nl_click', day);
    expect(file).toMatchObject({ hoursBuilt: [], rawObjectsRead: 0, events: 6 * 3 * 6 + 1 });
    expect(stats.reads.filter((k) => k.startsWith('raw/'))).toEqual([]);
  });

  it("builds the other clients' hours when one client's raw object cannot be merged, then fails naming it", async () => {
    const { store, put, objects } = memoryStore();
    // A large object out of date order: streamed, so the merge refuses it.
    const lines = Array.from({ length: 1200 }, (_, i) => ({ date: at(2, i), email: `u${i}@x.io`, campaign_id: 'x'.repeat(300) }));
    [lines[600], lines[601]] = [lines[601], lines[600]];
    const bad = `${eventPaths.rawHour('aaa-bad', 'nl_click', day, '02')}big.jsonl`;
    put(bad, lines);
    put(rawKey('02', 'ok'), [{ date: at(2, 5), email: 'ok@x.io' }]);
    await expect(runHourlyAssembly(store, { time: time(3, 5) })).rejects.toThrow(new RegExp(`^Hours of 1 file\\(s\\) not built \\(the others were\\): aaa-bad/nl_click/${day}: .*${bad}`));
    expect([...objects.keys()].filter((k) => k.startsWith(eventPaths.hours('acme', 'nl_click', day)) && k.endsWith('.events'))).toHaveLength(1);
  });

  it('skips a day holding raw objects written before hours existed', async () => {
    const { store, put, objects } = memoryStore();
    put(`${eventPaths.raw('acme', 'nl_click', day)}old.jsonl`, [{ date: at(1), email: 'a@x.io' }]);
    put(rawKey('01', 'new'), [{ date: at(1), email: 'b@x.io' }]);
    const run = await runHourlyAssembly(store, { time: time(5, 5) });
    expect(run.skipped).toEqual([{ clientId: 'acme', event: 'nl_click', day, reason: expect.stringMatching(/^1 raw objects outside hour folders/) as string }]);
    expect([...objects.keys()].filter((k) => k.startsWith('hours'))).toEqual([]);
  });
});
