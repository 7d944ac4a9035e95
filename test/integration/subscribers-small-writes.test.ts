/**
 * Small writes are never starved: while a bulk write holds a list in short
 * holds, single-subscriber POSTs, unsubscribes and users/delete of addresses
 * on that list each answer 200 within a few seconds, and counts stay exact.
 */
import { describe, expect, it } from 'vitest';
import { newClient, request, useService } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('small writes during a bulk write of the same list', () => {
  it('single POSTs, unsubscribes and users/delete answer 200 within 3 s each while a 6,000-line POST runs; counts stay exact', async () => {
    const client = await newClient(service);
    const url = `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
    const post = (body: unknown) => request(url, { method: 'POST', token: client.token, body });
    // Members the small writes will unsubscribe or delete.
    expect((await post(Array.from({ length: 40 }, (_, i) => ({ email: `member${i}@example.com` })))).status).toBe(200);
    const bulk = post(Array.from({ length: 6000 }, (_, i) => ({ email: `bulk${i}@example.com`, data_n: i })));
    const timings: Array<{ what: string; status: number; ms: number }> = [];
    const timed = async (what: string, send: () => Promise<{ status: number }>) => {
      const started = Date.now();
      const reply = await send();
      timings.push({ what, status: reply.status, ms: Date.now() - started });
    };
    const small: Array<Promise<void>> = [];
    for (let i = 0; i < 30; i++) {
      await sleep(120);
      if (i % 3 === 0) small.push(timed('subscribe', () => post({ email: `single${i}@example.com` })));
      if (i % 3 === 1) small.push(timed('unsubscribe', () => post({ email: `member${i}@example.com`, subscribed: false })));
      if (i % 3 === 2) small.push(timed('users/delete', () => request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: `member${i}@example.com` }] })));
    }
    await Promise.all(small);
    expect((await bulk).status).toBe(200);
    expect(timings.filter((t) => t.status !== 200)).toEqual([]);
    expect(timings.filter((t) => t.ms >= 3_000)).toEqual([]);
    const truth = await recount(client.username, client.defaultListId);
    expect(truth).toMatchObject({ subscribed: 40 - 20 + 10 + 6000, unsubscribed: 10 });
    expect((await request(`${url}/count`, { token: client.token })).body).toEqual(truth);
  }, 90_000);
});
