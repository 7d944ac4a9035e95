import { describe, expect, it } from 'vitest';
import { DELETION_WINDOW, READ_CACHE_SECONDS } from '../../shared/recos/read-cache.js';
import { NEIGHBOUR_MAX_AGE_SECONDS, NEIGHBOUR_REFRESH_SECONDS, packNeighbours, strongestNeighbours, unpackNeighbours } from '../../shared/recos/neighbours.js';
import type { Article } from '../../shared/recos/types.js';

describe('neighbour snapshots', () => {
  it('keeps the strongest co-read guids outside the skipped ones, ties by guid', () => {
    // Prepare
    const counts = { a: 5, b: 9, c: 5, d: 1, p: 20 };
    // Act
    const chosen = strongestNeighbours(counts, new Set(['p']), 3);
    // Assess
    expect(chosen).toEqual(['b', 'a', 'c']);
  });

  it('packs the ranking and response fields into one JSON string and back', () => {
    const article: Article = { guid: 'g', url: 'https://x.example/a', title: 'T "quoted"', desc: 'D', image: 'https://x.example/i.png', category: 'news', themes: ['x', 'y'], published: 100, firstSeen: 100, lastSeen: 100, views: 7, clicks: 0, hot: 12.5 };
    const [back] = unpackNeighbours(packNeighbours([article]));
    expect(back).toEqual(article);
  });

  it('a usable snapshot is younger than the deletion windows a request reads, and is rewritten well before it stops being usable', () => {
    expect(NEIGHBOUR_MAX_AGE_SECONDS).toBeLessThan(DELETION_WINDOW);
    expect(NEIGHBOUR_REFRESH_SECONDS).toBeLessThan(NEIGHBOUR_MAX_AGE_SECONDS);
    expect(READ_CACHE_SECONDS).toBeLessThanOrEqual(NEIGHBOUR_MAX_AGE_SECONDS);
  });
});
