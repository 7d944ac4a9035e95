/** shared/db/client.ts `limiter`: at most n calls at a time, the others in turn (lowest rank first), a failed call's slot passed on. */
import { describe, expect, it } from 'vitest';
import { limiter } from '../../shared/db/client.js';

describe('limiter', () => {
  it('runs at most n calls at a time, the waiting ones first come first served, and passes a failed call’s slot on', async () => {
    const slot = limiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const call = (i: number, fail = false) =>
      slot(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await new Promise((wait) => setTimeout(wait, 5));
        running--;
        if (fail) throw new Error(`call ${i} failed`);
        return i;
      });
    const results = await Promise.allSettled([call(0), call(1, true), call(2), call(3), call(4)]);
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    // A call that throws before its first await (as a lease fence does) gives its slot back too.
    await expect(slot(() => {
      throw new Error('fenced');
    })).rejects.toThrow('fenced');
    // Every slot was given back: two more run at once.
    running = 0;
    most = 0;
    await Promise.all([call(5), call(6)]);
    expect(most).toBe(2);
  });

  it('serves the waiting calls lowest rank first, first come first served within a rank', async () => {
    const slot = limiter(1);
    const started: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((done) => (open = done));
    const call = (name: string, rank?: number) =>
      slot(async () => {
        started.push(name);
        if (name === 'first') await gate;
      }, rank);
    const all = [call('first', 5), call('c3', 3), call('none'), call('a1', 1), call('c3 again', 3), call('b1', 1)];
    open();
    await Promise.all(all);
    // A call without a rank has rank 0.
    expect(started).toEqual(['first', 'none', 'a1', 'b1', 'c3', 'c3 again']);
  });
});
