/**
 * A/B variants, recomm_id and click attribution, and the recommendation
 * statistics routes, through the local gateway: answers and followed
 * redirects queue their counts on the tracking queue; once it is drained, the
 * daily and experiment numbers are exactly what the test saw answered and clicked.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBlock } from '../../shared/clients/clients.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type ErrorBody, type TestClient } from '../helpers/service.js';

const service = useService();
const site = () => `https://news-${randomUUID().slice(0, 8)}.stats.example`;

interface Answer {
  recomm_id: string;
  variant: string;
  algo?: string;
  result?: { recommendation: Array<{ guid: string; url: string }> };
  recommendations?: Array<{ guid: string; url: string }>;
}
interface DailyRow {
  date: string;
  block_key: string;
  variant: string;
  served: number;
  impressions: number;
  clicks: number;
  ctr: number;
}
interface Experiment {
  block_key: string;
  holdout: string | null;
  method: string;
  variants: Array<{ variant: string; holdout: boolean; served: number; impressions: number; clicks: number; ctr: number; ctr_interval: { lower: number; upper: number } | null; lift?: { value: number; lower: number; upper: number } | null }>;
}

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const range = `from=${day(-1)}&to=${day(1)}`;
const items = (a: Answer) => a.result?.recommendation ?? a.recommendations ?? [];

async function recos(blockKey: string, userId: string, query = ''): Promise<Answer> {
  const reply = await request<Answer>(`${service.url}/v1/clients/${blockKey}/users/${encodeURIComponent(userId)}/recommendations${query ? `?${query}` : ''}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/** Tracks `views[i]` page views of article i, each by its own reader: article 0 is the most read. */
async function catalogue(client: TestClient, views: number[]): Promise<string[]> {
  const base = site();
  const urls = views.map((_, i) => `${base}/story-${i}`);
  for (const [i, n] of views.entries()) {
    for (let k = 0; k < n; k++) {
      const reply = await request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: `crowd-${i}-${k}`, url: urls[i], title: `Story ${i}` } });
      expect(reply.status, reply.text).toBe(200);
    }
  }
  await service.drain();
  return urls;
}

const stats = <T>(client: TestClient, route: 'daily' | 'experiment', query: string) => request<T>(`${service.url}/v1/stats/recommendations/${route}?${query}`, { token: client.token });

describe('A/B variants, recomm_id and recommendation statistics', () => {
  it('counts served, impressions and clicks per variant exactly; same reader same variant; holdout answers most-read; forged rids count nothing', async () => {
    const client = await newClient(service, { siteHosts: ['*.stats.example'] });
    const urls = await catalogue(client, [8, 7, 6, 5, 4, 0]);
    // Two readers read story 0 then story 5: story 5 is story 0's co-read, and the least read of all.
    for (const reader of ['pair-1', 'pair-2']) {
      for (const url of [urls[0], urls[5]]) {
        expect((await request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: reader, url, title: 'Story' } })).status).toBe(200);
      }
    }
    await service.drain();
    const block = await createBlock(client.username, {
      rows: 4,
      variants: [
        { name: 'A', share: 40, weights: { covisit: 2, freshness: 0 } },
        { name: 'H', share: 30, holdout: true },
      ],
    });

    const expected = new Map<string, { served: number; impressions: number; clicks: number }>();
    const add = (variant: string, d: Partial<{ served: number; impressions: number; clicks: number }>) => {
      const e = expected.get(variant) ?? { served: 0, impressions: 0, clicks: 0 };
      expected.set(variant, { served: e.served + (d.served ?? 0), impressions: e.impressions + (d.impressions ?? 0), clicks: e.clicks + (d.clicks ?? 0) });
    };
    const variantOf = new Map<string, string>();
    const answers: Answer[] = [];
    for (let i = 0; i < 60; i++) {
      const reader = `reader-${i}`;
      const answer = await recos(block, reader, i % 10 === 9 ? 'format=legacy' : '');
      expect(answer.recomm_id).toMatch(new RegExp(`^${answer.variant}\\.[A-Za-z0-9_-]{16}$`));
      for (const item of items(answer)) expect(item.url).toMatch(new RegExp(`^${service.url}/v1/r/${block}/${item.guid}\\?rid=${answer.recomm_id}\\.[A-Za-z0-9_-]{16}$`));
      variantOf.set(reader, answer.variant);
      answers.push(answer);
      add(answer.variant, { served: 1, impressions: items(answer).length });
    }
    // Every variant and the remainder (default) answered someone.
    expect(new Set(variantOf.values())).toEqual(new Set(['A', 'H', 'default']));

    // The same reader always gets the same variant (and a new recomm_id each time).
    for (const i of [0, 1, 2, 3, 4, 5]) {
      const again = await recos(block, `reader-${i}`);
      expect(again.variant).toBe(variantOf.get(`reader-${i}`));
      expect(again.recomm_id).not.toBe(answers[i].recomm_id);
      add(again.variant, { served: 1, impressions: items(again).length });
    }

    // A holdout answer is the most-read list (popularity alone), without the page being read.
    const holdoutReader = [...variantOf].find(([, v]) => v === 'H')![0];
    const holdout = await recos(block, holdoutReader, `page_url=${encodeURIComponent(urls[0])}`);
    expect(holdout.variant).toBe('H');
    expect(holdout.algo).toBe('holdout:most-read');
    expect(items(holdout).map((r) => r.guid)).toEqual(urls.slice(1, 5).map((u) => articleGuid(u)));
    add('H', { served: 1, impressions: items(holdout).length });
    // The same page for a reader of variant A: its co-read comes first (what the holdout leaves to popularity).
    const treatedReader = [...variantOf].find(([, v]) => v === 'A')![0];
    const treated = await recos(block, treatedReader, `page_url=${encodeURIComponent(urls[0])}`);
    expect(treated.variant).toBe('A');
    expect(treated.algo).not.toBe('holdout:most-read');
    expect(items(treated)[0].guid).toBe(articleGuid(urls[5]));
    add('A', { served: 1, impressions: items(treated).length });

    // Clicks: the first item of every second answer, and the second item of every sixth.
    for (const [k, answer] of answers.entries()) {
      const picks = [...(k % 2 === 0 ? [items(answer)[0]] : []), ...(k % 6 === 0 ? [items(answer)[1]] : [])];
      for (const item of picks) {
        const reply = await request(item.url);
        expect(reply.status, reply.text).toBe(302);
        add(answer.variant, { clicks: 1 });
      }
    }
    // Redirects that count nothing in the statistics (still redirected): no rid, a forged variant, a malformed id.
    const guid = articleGuid(urls[0]);
    for (const query of ['', '?rid=forged.AAAAAAAAAAAAAAAA', '?rid=A.short', `?rid=${encodeURIComponent('H.AAAAAAAAAAAAAAAA#x')}`]) {
      expect((await request(`${service.url}/v1/r/${block}/${guid}${query}`)).status).toBe(302);
    }
    await service.drain();

    const daily = await stats<DailyRow[]>(client, 'daily', `${range}&block_key=${block}`);
    expect(daily.status, daily.text).toBe(200);
    const sums = new Map<string, { served: number; impressions: number; clicks: number }>();
    for (const row of daily.body) {
      expect(row.block_key).toBe(block);
      expect(row.ctr).toBeCloseTo(row.impressions > 0 ? row.clicks / row.impressions : 0, 12);
      const s = sums.get(row.variant) ?? { served: 0, impressions: 0, clicks: 0 };
      sums.set(row.variant, { served: s.served + row.served, impressions: s.impressions + row.impressions, clicks: s.clicks + row.clicks });
    }
    // Exactly the answers and clicks seen: no forged variant, nothing else.
    expect(Object.fromEntries(sums)).toEqual(Object.fromEntries(expected));
    // Without block_key: the same rows (the client has one block).
    expect((await stats<DailyRow[]>(client, 'daily', range)).body).toEqual(daily.body);

    const experiment = await stats<Experiment>(client, 'experiment', `${range}&block_key=${block}`);
    expect(experiment.status, experiment.text).toBe(200);
    expect(experiment.body.holdout).toBe('H');
    expect(experiment.body.method).toMatch(/Wilson score.*Katz log method/);
    const byName = new Map(experiment.body.variants.map((v) => [v.variant, v]));
    expect(experiment.body.variants.map((v) => v.variant)).toEqual(['A', 'H', 'default']);
    const control = expected.get('H')!;
    for (const [name, e] of expected) {
      const v = byName.get(name)!;
      expect({ served: v.served, impressions: v.impressions, clicks: v.clicks }).toEqual(e);
      expect(v.holdout).toBe(name === 'H');
      expect(v.ctr).toBeCloseTo(e.clicks / e.impressions, 12);
      expect(v.ctr_interval!.lower).toBeLessThan(v.ctr);
      expect(v.ctr_interval!.upper).toBeGreaterThan(v.ctr);
      if (name === 'H') {
        expect(v.lift).toBeUndefined();
      } else {
        expect(v.lift!.value).toBeCloseTo(e.clicks / e.impressions / (control.clicks / control.impressions) - 1, 12);
        expect(v.lift!.lower).toBeLessThan(v.lift!.value);
        expect(v.lift!.upper).toBeGreaterThan(v.lift!.value);
      }
    }
  });

  it('counts only clicks of links it signed: once per answer and article, only for articles the answer showed; forged ids and newsletter ids without a send count nothing', async () => {
    const client = await newClient(service, { siteHosts: ['*.stats.example'] });
    const urls = await catalogue(client, [6, 5, 4, 3, 2, 1]);
    const block = await createBlock(client.username, { rows: 2, variants: [{ name: 'treat', share: 100 }] });
    const answer = await recos(block, 'reader-1');
    expect(answer.variant).toBe('treat');
    const [first] = items(answer);
    const rid = new URL(first.url).searchParams.get('rid')!;
    const notShown = urls.map((u) => articleGuid(u)).find((g) => !items(answer).some((i) => i.guid === g))!;
    const redirect = async (guid: string, query: string) => expect((await request(`${service.url}/v1/r/${block}/${guid}${query}`)).status).toBe(302);
    // Forged ids of a variant the block has, and of the newsletter (never sent): redirected, never counted.
    for (let i = 0; i < 30; i++) await redirect(first.guid, '?rid=treat.ZZZZZZZZZZZZZZZZ');
    for (let i = 0; i < 3; i++) await redirect(first.guid, '?rid=newsletter.AAAAAAAAAAAAAAAA');
    await redirect(first.guid, `?rid=treat.ZZZZZZZZZZZZZZZZ.${rid.split('.')[2]}`);
    // The answer's own id unsigned (a link sent before ids were signed), and its signed id on an article it did not show.
    await redirect(first.guid, `?rid=${answer.recomm_id}`);
    await redirect(notShown, `?rid=${encodeURIComponent(rid)}`);
    // The real link, followed five times: one click.
    for (let i = 0; i < 5; i++) expect((await request(first.url)).status).toBe(302);
    await service.drain();

    const daily = await stats<DailyRow[]>(client, 'daily', `${range}&block_key=${block}`);
    expect(daily.body.map((r) => [r.variant, r.served, r.impressions, r.clicks])).toEqual([['treat', 1, 2, 1]]);
    const experiment = await stats<Experiment>(client, 'experiment', `${range}&block_key=${block}`);
    for (const v of experiment.body.variants) expect(v.ctr).toBeLessThanOrEqual(1);
    expect(experiment.body.variants.map((v) => [v.variant, v.clicks, v.impressions])).toEqual([['treat', 1, 2]]);
  });

  it('a block without a holdout has no lift, and says so; a block without a test answers variant default', async () => {
    const client = await newClient(service, { siteHosts: ['*.stats.example'] });
    await catalogue(client, [2, 1]);
    const block = await createBlock(client.username, { variants: [{ name: 'B', share: 50 }] });
    const plain = await createBlock(client.username);
    for (let i = 0; i < 6; i++) await recos(block, `r-${i}`);
    const answer = await recos(plain, 'someone');
    expect(answer.variant).toBe('default');
    expect(answer.recomm_id).toMatch(/^default\.[A-Za-z0-9_-]{16}$/);
    expect((await request(items(answer)[0].url)).status).toBe(302);
    await service.drain();

    const experiment = await stats<Experiment>(client, 'experiment', `${range}&block_key=${block}`);
    expect(experiment.status, experiment.text).toBe(200);
    expect(experiment.body.holdout).toBeNull();
    expect(experiment.body.method).toMatch(/no holdout variant: no lift/);
    expect(experiment.body.variants.reduce((n, v) => n + v.served, 0)).toBe(6);
    for (const v of experiment.body.variants) expect(v).not.toHaveProperty('lift');

    const daily = await stats<DailyRow[]>(client, 'daily', `${range}&block_key=${plain}`);
    expect(daily.body.map(({ date: _date, ...row }) => row)).toEqual([{ block_key: plain, variant: 'default', served: 1, impressions: items(answer).length, clicks: 1, ctr: 1 / items(answer).length }]);
  });

  it('another client\'s block is 404; bad dates and a missing block_key are 400 with their cause; no token is 401', async () => {
    const client = await newClient(service, { siteHosts: ['*.stats.example'] });
    const other = await newClient(service, { siteHosts: ['*.stats.example'] });
    const foreign = await createBlock(other.username, { variants: [{ name: 'B', share: 50, holdout: true }] });
    for (const route of ['daily', 'experiment'] as const) {
      expect((await stats<ErrorBody>(client, route, `${range}&block_key=${foreign}`)).body).toEqual({ status: 404, cause: 'Unknown block key' });
      expect((await stats<ErrorBody>(client, route, `${range}&block_key=no-such-block`)).status).toBe(404);
      expect((await request(`${service.url}/v1/stats/recommendations/${route}?${range}&block_key=${foreign}`)).status).toBe(401);
      const missing = await stats<ErrorBody>(client, route, `to=${day(0)}&block_key=${foreign}`);
      expect(missing.status).toBe(400);
      expect(missing.body.cause).toBe('query.from: is required');
      const reversed = await stats<ErrorBody>(client, route, `from=${day(1)}&to=${day(0)}&block_key=${foreign}`);
      expect(reversed.status).toBe(400);
      expect(reversed.body.cause).toMatch(/from must not be after to/);
      const notADay = await stats<ErrorBody>(client, route, `from=2026-02-30&to=${day(0)}&block_key=${foreign}`);
      expect(notADay.status).toBe(400);
      expect(notADay.body.cause).toMatch(/from is not a calendar day/);
    }
    const noBlock = await stats<ErrorBody>(client, 'experiment', range);
    expect(noBlock.status).toBe(400);
    expect(noBlock.body.cause).toBe('query.block_key: is required by the experiment report');
    const unknownReport = await stats<ErrorBody>(client, 'weekly' as 'daily', range);
    expect([unknownReport.status, unknownReport.body.cause]).toEqual([404, 'No route for GET /v1/stats/recommendations/weekly']);
    // The caller's own range without blocks: no rows.
    expect((await stats<DailyRow[]>(client, 'daily', range)).body).toEqual([]);
  });
});
