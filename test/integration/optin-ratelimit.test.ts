/**
 * Rate limits of POST /v1/subscribe (spec §8). Every test request comes from
 * 127.0.0.1; counters are scoped per client (tracking key), so fresh clients
 * keep the tests independent. Bursts are fired concurrently through HTTP;
 * the atomic DynamoDB counters must let exactly the limit through.
 */
import { describe, expect, it } from 'vitest';
import { createForm, setClientSetting } from '../../shared/clients/clients.js';
import { mailsTo, newEmail } from '../helpers/optin.js';
import { newClient, request, useService, type ErrorBody } from '../helpers/service.js';

const service = useService();

/** Waits, if needed, so that a burst does not straddle two one-minute windows (a wait, not an assertion on time). */
async function awayFromWindowEdge() {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
}

async function burst(limits: { perIpPerMinute?: number; perKeyPerMinute?: number } | undefined, requests: number) {
  const client = await newClient(service);
  if (limits) await setClientSetting(client.username, 'rateLimits', limits);
  const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
  const emails = Array.from({ length: requests }, () => newEmail('burst'));
  await awayFromWindowEdge();
  const replies = await Promise.all(
    emails.map((email) => request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email, form_key: formKey } })),
  );
  const mailed = (await Promise.all(emails.map(mailsTo))).filter((m) => m.length > 0).length;
  return { client, formKey, replies, mailed };
}

describe('POST /v1/subscribe rate limits', () => {
  it('lets exactly 5 requests per IP per minute through by default, then 429 with Retry-After', async () => {
    const { replies, mailed } = await burst(undefined, 12);
    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    expect(ok).toHaveLength(5);
    expect(limited).toHaveLength(7);
    expect(mailed).toBe(5);
    for (const reply of limited) {
      expect(reply.body).toEqual({ status: 429, cause: expect.stringMatching(/^Too many requests from this IP address: at most 5 per minute; retry in \d+ s$/) as string });
      const retryAfter = Number(reply.headers.get('retry-after'));
      expect(retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(reply.headers.get('access-control-expose-headers')).toContain('retry-after');
    }
  });

  it('lets exactly 10 requests per minute through per tracking key overall', async () => {
    const { replies, mailed } = await burst({ perIpPerMinute: 1000, perKeyPerMinute: 10 }, 24);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(14);
    expect((limited[0].body as ErrorBody).cause).toMatch(/^Too many requests for this form: at most 10 per minute/);
    expect(mailed).toBe(10);
  });

  it("applies a client's own limits (admin set-rate-limits), and another client's burst does not count against it", async () => {
    const strict = await burst({ perIpPerMinute: 2, perKeyPerMinute: 10 }, 6);
    expect(strict.replies.filter((r) => r.status === 200)).toHaveLength(2);
    const roomy = await burst({ perIpPerMinute: 7, perKeyPerMinute: 7 }, 9);
    expect(roomy.replies.filter((r) => r.status === 200)).toHaveLength(7);
  });

  it("refuses every request when a client's limit is 0", async () => {
    const { replies, mailed } = await burst({ perIpPerMinute: 0, perKeyPerMinute: 10 }, 3);
    expect(replies.map((r) => r.status)).toEqual([429, 429, 429]);
    expect(mailed).toBe(0);
  });

  it('counts requests that fail later checks (unknown form key) too', async () => {
    const client = await newClient(service);
    await awayFromWindowEdge();
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email: newEmail(), form_key: 'unknown' } })),
    );
    expect(replies.filter((r) => r.status === 400)).toHaveLength(5);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(3);
  });
});
