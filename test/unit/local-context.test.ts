/**
 * The local gateway's and job runner's Lambda contexts time the remaining time by the monotonic clock: under the
 * benchmarks' simulated wall clock (bench/sim-clock.ts) a `Date.now()` deadline lapses within milliseconds.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/gateway.js';
import { context as jobContext } from '../../infra/local/jobs.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('local Lambda contexts', () => {
  it('keep their remaining time when the wall clock jumps (a simulated clock)', () => {
    const route = lambdaContext('trackPost');
    const job = jobContext('trackingViews', 60);
    const realNow = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => realNow + 3_600_000);
    expect(route.getRemainingTimeInMillis()).toBeGreaterThan(29_000);
    expect(route.getRemainingTimeInMillis()).toBeLessThanOrEqual(30_000);
    expect(job.getRemainingTimeInMillis()).toBeGreaterThan(59_000);
    expect(job.getRemainingTimeInMillis()).toBeLessThanOrEqual(60_000);
  });
});
