import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settledOrDeadline } from '../../shared/db/client.js';

describe('settledOrDeadline (a wait for another writer, bounded by a deadline)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves when the promise resolves, and leaves no timer behind', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const waited = settledOrDeadline(held, Date.now() + 20_000);
    expect(vi.getTimerCount()).toBe(1);
    release();
    await waited;
    // Promise.race with a sleep kept a 20 s timer here (it kept an import's process alive ~19 s after its work).
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves, not rejects, when the promise rejects, and leaves no timer behind', async () => {
    let fail!: (err: Error) => void;
    const held = new Promise<void>((_, reject) => (fail = reject));
    const waited = settledOrDeadline(held, Date.now() + 20_000);
    fail(new Error('lease not released'));
    await expect(waited).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves at the deadline when the promise never settles', async () => {
    let resolved = false;
    const waited = settledOrDeadline(new Promise(() => undefined), Date.now() + 5_000).then(() => (resolved = true));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waited;
    expect(resolved).toBe(true);
  });
});
