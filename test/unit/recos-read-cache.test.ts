import { describe, expect, it } from 'vitest';
import { DELETION_WINDOW, deletionWindows, READ_CACHE_SECONDS, TtlCache } from '../../shared/recos/read-cache.js';

describe('TtlCache', () => {
  it('forgets an entry once it is ttl old (or dated ahead of the clock) and keeps at most maxEntries, oldest written first out', () => {
    const cache = new TtlCache<number>(2, 1000);
    cache.set('a', 1, 10_000);
    expect(cache.get('a', 10_999)).toBe(1);
    expect(cache.get('a', 11_000)).toBeUndefined();
    cache.set('a', 1, 10_000);
    expect(cache.get('a', 9_999)).toBeUndefined();
    cache.set('a', 1, 10_000);
    cache.set('b', 2, 10_000);
    cache.set('a', 3, 10_001);
    cache.set('c', 4, 10_002);
    expect([cache.get('a', 10_500), cache.get('b', 10_500), cache.get('c', 10_500)]).toEqual([3, undefined, 4]);
    expect(cache.size).toBe(2);
  });
});

describe('TtlCache on its own clock', () => {
  it('reads ages on the clock it was given, not the wall clock', () => {
    let ms = 5_000;
    const cache = new TtlCache<number>(2, 1000, () => ms);
    cache.set('a', 1);
    ms += 999;
    expect(cache.get('a')).toBe(1);
    ms += 1;
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('deletion windows', () => {
  it('a request reads the current and the previous window: every deletion of at least the last DELETION_WINDOW seconds, far more than a copy lives', () => {
    expect(DELETION_WINDOW).toBeGreaterThanOrEqual(4 * READ_CACHE_SECONDS);
    const now = 1_790_000_123;
    const [current, previous] = deletionWindows(now);
    expect(current % DELETION_WINDOW).toBe(0);
    expect(current).toBeLessThanOrEqual(now);
    expect(now - current).toBeLessThan(DELETION_WINDOW);
    expect(previous).toBe(current - DELETION_WINDOW);
    // A deletion `age` seconds ago lands in one of the two windows for every age up to DELETION_WINDOW.
    for (let age = 0; age <= DELETION_WINDOW; age += 7) expect(deletionWindows(now)).toContain(deletionWindows(now - age)[0]);
  });
});
