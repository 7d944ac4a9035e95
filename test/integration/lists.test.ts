import { describe, expect, it } from 'vitest';
import { createList } from '../../shared/lists/lists.js';
import { newClient, request, useService, type ApiBody } from '../helpers/service.js';

const service = useService();
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('GET /v1/newsletters/lists', () => {
  it("returns the client's lists by id with integer ids and millisecond UTC timestamps", async () => {
    const client = await newClient(service);
    await createList(client.username, 'Weekly');
    const reply = await request<ApiBody<'listsList'>>(`${service.url}/v1/newsletters/lists`, { token: client.token });
    expect(reply.status).toBe(200);
    expect(reply.body.map((l) => [l.id, l.name])).toEqual([
      [1, 'Default list'],
      [2, 'Weekly'],
    ]);
    for (const list of reply.body) {
      expect(list.created_at).toMatch(ISO_MS);
      expect(list.updated_at).toMatch(ISO_MS);
    }
  });

  it('allocates distinct consecutive list ids under concurrent creation', async () => {
    const client = await newClient(service);
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => createList(client.username, `L${i}`)));
    expect(created.map((l) => l.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
  });

  it("never shows client A's lists to client B", async () => {
    const a = await newClient(service);
    const b = await newClient(service);
    await createList(a.username, 'Secret list of A');
    const reply = await request<ApiBody<'listsList'>>(`${service.url}/v1/newsletters/lists`, { token: b.token });
    expect(reply.status).toBe(200);
    expect(reply.body.map((l) => l.name)).toEqual(['Default list']);
  });
});
