import { describe, expect, it } from 'vitest';
import { newClient, request, useService } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService();

describe('exact counts under concurrency', () => {
  it('keeps GET …/count equal to a full recount after many concurrent overlapping batches', async () => {
    const client = await newClient(service);
    const url = `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
    // 600 addresses; 16 concurrent batches of 100 lines each hit overlapping windows with mixed actions.
    const address = (i: number) => `person${i % 600}@example.com`;
    const causes = ['READER', 'PUBLISHER'];
    const batches = Array.from({ length: 16 }, (_, b) =>
      Array.from({ length: 100 }, (_, k) => {
        const i = b * 53 + k * 3;
        const action = (b + k) % 4;
        if (action === 0) return { email: address(i), subscribed: false, unsubscribed_cause: causes[(b + k) % 2] };
        if (action === 1) return { email: address(i), subscribed: true };
        if (action === 2) return { email: address(i), data_batch: b };
        return { email: address(i), subscribed: 'false' };
      }),
    );
    const replies = await Promise.all(batches.map((body) => request(url, { method: 'POST', token: client.token, body })));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    // A few hard bounces through the same service, concurrently with deletions of other addresses.
    const { applySubscribers } = await import('../../shared/subscribers/service.js');
    await Promise.all([
      applySubscribers(client.username, client.defaultListId, [1, 2, 3].map((i) => ({ line: i, email: address(i), subscribed: false, unsubscribedCause: 'HARD_BOUNCE' as const }))),
      request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: address(10) }, { email: address(11) }] }),
      request(url, { method: 'POST', token: client.token, body: [{ email: address(12), subscribed: true }, { email: address(13), subscribed: false }] }),
    ]);
    const counted = await request(`${url}/count`, { token: client.token });
    const truth = await recount(client.username, client.defaultListId);
    expect(counted.body).toEqual(truth);
    expect(truth.subscribed + truth.unsubscribed).toBeGreaterThan(250);
    expect(truth.unsubscribed).toBeGreaterThan(0);
  });
});
