/**
 * Editorial rules of a block through the local gateway: set with `PUT
 * /v1/blocks/{block_key}`, applied by `GET …/recommendations` (pins at their
 * position until `until`, never on their own page; exclusions by URL and
 * category), and the reasons of the smart-section envelope.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBlockWithSettings } from '../../shared/recos/block-settings.js';
import { dropReadCaches } from '../../shared/recos/service.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type RecommendationsBody, type TestClient } from '../helpers/service.js';

const service = useService();
let client: TestClient;
const url = (slug: string) => `https://rules.example/${slug}`;
/** Five articles, a the most read and e the least; e is in category "ads". */
const slugs = ['a', 'b', 'c', 'd', 'e'];

beforeAll(async () => {
  client = await newClient(service, { siteHosts: ['rules.example'] });
  for (const [i, slug] of slugs.entries()) {
    for (let r = 0; r < 5 - i; r++) {
      const body = { user_id: `crowd-${slug}-${r}`, url: url(slug), title: `Title ${slug}`, category: slug === 'e' ? 'Ads' : 'News' };
      expect((await request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body })).status).toBe(200);
    }
  }
  await service.drain();
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function recos(block: string, query = '') {
  const reply = await request<RecommendationsBody>(`${service.url}/v1/clients/${block}/users/reader/recommendations${query ? `?${query}` : ''}`);
  expect(reply.status).toBe(200);
  return reply.body.result.recommendation;
}
const slugsOf = (items: Array<{ guid: string }>) => items.map((i) => slugs.find((s) => articleGuid(url(s)) === i.guid) ?? i.guid);

async function put(block: string, body: unknown) {
  const reply = await request(`${service.url}/v1/blocks/${block}`, { method: 'PUT', body, token: client.token });
  expect(reply.status).toBe(200);
  // A container that has not read the block yet (a warm one applies it within BLOCK_KEY_CACHE_SECONDS: blocks.test.ts).
  dropReadCaches();
}

describe('editorial rules', () => {
  it('shows a pinned article at its position until `until`, never on its own page nor when the request excludes it', async () => {
    const block = (await createBlockWithSettings(client.username, {})).block_key;
    expect(slugsOf(await recos(block))).toEqual(['a', 'b', 'c', 'd', 'e']);
    const until = Math.floor(Date.now() / 1000) + 3600;
    await put(block, { pins: [{ url: url('e'), position: 2, until }] });
    const pinned = await recos(block);
    expect(slugsOf(pinned)).toEqual(['a', 'e', 'b', 'c', 'd']);
    expect(pinned[1].reason).toEqual({ type: 'pinned' });
    expect(pinned[0].reason).toEqual({ type: 'popular' });
    // Paging: position 2 of the ranking is the first item of the page starting at 1.
    expect(slugsOf(await recos(block, 'start=1&rows=2'))).toEqual(['e', 'b']);
    // On the pinned article's own page: not shown; excluded by the request (URL or guid): not shown.
    expect(slugsOf(await recos(block, `page_url=${encodeURIComponent(url('e'))}`))).toEqual(['a', 'b', 'c', 'd']);
    expect(slugsOf(await recos(block, `excluded[]=${encodeURIComponent(url('e'))}`))).toEqual(['a', 'b', 'c', 'd']);
    expect(slugsOf(await recos(block, `excluded[]=${articleGuid(url('e'))}`))).toEqual(['a', 'b', 'c', 'd']);
    // After `until`: ranked by its score again.
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3601 * 1000);
    expect(slugsOf(await recos(block))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('skips a pin of an article the catalogue does not have', async () => {
    const block = (await createBlockWithSettings(client.username, { pins: [{ url: url('never-seen'), position: 1 }] })).block_key;
    expect(slugsOf(await recos(block))).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Deleted from the catalogue: skipped as well.
    await put(block, { pins: [{ url: url('d'), position: 1 }] });
    expect(slugsOf(await recos(block))[0]).toBe('d');
    expect((await request(`${service.url}/v1/articles?url=${encodeURIComponent(url('d'))}`, { method: 'DELETE', token: client.token })).status).toBe(200);
    expect(slugsOf(await recos(block))).toEqual(['a', 'b', 'c', 'e']);
  });

  it('never recommends what the block excludes, by URL or by category (any case)', async () => {
    // What a block without rules recommends (d may have been deleted by the test before).
    const all = slugsOf(await recos((await createBlockWithSettings(client.username, {})).block_key));
    expect(all).toEqual(expect.arrayContaining(['a', 'b', 'c', 'e']));
    const block = (await createBlockWithSettings(client.username, { exclude: { urls: [`${url('b')}?utm_source=x`], categories: ['ads'] } })).block_key;
    expect(slugsOf(await recos(block))).toEqual(all.filter((s) => s !== 'b' && s !== 'e'));
    // The request's own exclusions still apply beside the block's.
    expect(slugsOf(await recos(block, `excluded[]=${encodeURIComponent(url('a'))}`))).toEqual(all.filter((s) => s !== 'a' && s !== 'b' && s !== 'e'));
    await put(block, { exclude: null });
    expect(slugsOf(await recos(block))).toEqual(all);
  });
});
