/**
 * A client generated from the API document (openapi-typescript types,
 * openapi-fetch) used end to end, without casts: what a publisher's
 * developer gets from the document is enough to call the service.
 */
import createClient from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import { createBlock, createClient as createServiceClient } from '../../shared/clients/clients.js';
import { checkedFetch } from '../helpers/api-contract.js';
import type { paths } from '../helpers/api-types.generated.js';
import { useService } from '../helpers/service.js';
import { streamDrained } from '../helpers/subscribers.js';

const service = useService();

describe('a typed client generated from /v1/openapi.json', () => {
  it('gets a token, lists, subscribes a batch to list 1, pages with count 10 and gets recommendations', async () => {
    const username = `typed-${Date.now()}`;
    const { apiKey } = await createServiceClient(username, { siteHosts: ['typed.example'] });
    const blockKey = await createBlock(username, { name: 'typed' });
    const api = createClient<paths>({ baseUrl: service.url, fetch: checkedFetch });

    const token = await api.GET('/v1/token', { params: { query: { username, password: apiKey } } });
    expect(token.response.status).toBe(200);
    const auth = { 'X-Service-Client-Token': token.data!.token };

    const lists = await api.GET('/v1/newsletters/lists', { headers: auth });
    expect(lists.data!.map((l) => l.id)).toEqual([1]);

    const batch = await api.POST('/v1/newsletters/lists/{list_id}/subscribers', {
      params: { path: { list_id: 1 } },
      headers: auth,
      body: Array.from({ length: 12 }, (_, i) => ({ email: `reader${i}@typed.example`, subscribed: true, data_first_name: `Reader ${i}` })),
    });
    expect(batch.data!.report.nb_created).toBe(12);

    const page = await api.GET('/v1/newsletters/lists/{list_id}/subscribers', { params: { path: { list_id: 1 }, query: { count: 10, status: 'subscribed' } }, headers: auth });
    expect(page.data).toHaveLength(10);
    const cursor = page.response.headers.get('x-next-cursor');
    expect(cursor).toBeTruthy();
    const rest = await api.GET('/v1/newsletters/lists/{list_id}/subscribers', { params: { path: { list_id: 1 }, query: { count: 10, status: 'subscribed', cursor: cursor! } }, headers: auth });
    expect(rest.data).toHaveLength(2);

    // The count is exact once the table's stream has drained (a caller reads it a moment after writing).
    await streamDrained();
    const count = await api.GET('/v1/newsletters/lists/{list_id}/subscribers/count', { params: { path: { list_id: 1 } }, headers: auth });
    expect(count.data!.subscribed).toBe(12);

    const recos = await api.GET('/v1/clients/{block_key}/users/{user_id}/recommendations', {
      params: { path: { block_key: blockKey, user_id: 'reader-1' }, query: { rows: 4, shuffle: true, 'excluded[]': ['https://typed.example/a', 'https://typed.example/b'] } },
    });
    expect(recos.response.status).toBe(200);
    // The array goes out as the repeated parameter the service reads.
    expect(new URL(recos.response.url).searchParams.getAll('excluded[]')).toEqual(['https://typed.example/a', 'https://typed.example/b']);
    expect(recos.data).toBeDefined();

    const refused = await api.GET('/v1/newsletters/lists/{list_id}/subscribers/count', { params: { path: { list_id: 1 } }, headers: { 'X-Service-Client-Token': 'nope' } });
    expect(refused.response.status).toBe(401);
    expect(refused.error).toMatchObject({ status: 401, cause: expect.stringMatching(/^Unknown token/) as string });
  });
});
