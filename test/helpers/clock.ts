import { vi } from 'vitest';

/**
 * Puts the monotonic clock (`performance.now`, which the copies of settings
 * age on: shared/ttl-cache.ts `monotonicMs`) `ms` ahead, running on; the
 * spy, for `mockRestore` (or the file's `vi.restoreAllMocks`).
 */
export function monotonicAhead(ms: number) {
  const real = performance.now.bind(performance);
  return vi.spyOn(performance, 'now').mockImplementation(() => real() + ms);
}
