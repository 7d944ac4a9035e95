/**
 * The block settings routes through the local gateway: a client lists, reads
 * and changes its own blocks (another client's block is 404), every setting
 * is validated with a cause naming it, the admin CLI goes through the same
 * validation, and a warm recommendation container applies a change within
 * BLOCK_KEY_CACHE_SECONDS.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBlock, resolvePublicKey } from '../../shared/clients/clients.js';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createBlockWithSettings } from '../../shared/recos/block-settings.js';
import { BLOCK_KEY_CACHE_SECONDS } from '../../shared/recos/read-cache.js';
import { dropReadCaches } from '../../shared/recos/service.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type ApiBody, type ErrorBody, type RecommendationsBody, type TestClient } from '../helpers/service.js';
import { monotonicAhead } from '../helpers/clock.js';

const service = useService();
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

let owner: TestClient;
let other: TestClient;
let blockKey: string;
let othersBlock: string;

const blocksUrl = (key = '') => `${service.url}/v1/blocks${key ? `/${key}` : ''}`;
const put = (key: string, body: unknown, token = owner.token) => request<ApiBody<'blocksPut'> & ErrorBody>(blocksUrl(key), { method: 'PUT', body, token });

beforeAll(async () => {
  owner = await newClient(service, { siteHosts: ['news.blocks.example', '*.blogs.example'] });
  other = await newClient(service, { siteHosts: ['other.example'] });
  blockKey = (await createBlockWithSettings(owner.username, { name: 'Home' })).block_key;
  othersBlock = await createBlock(other.username, { name: 'Not yours' });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('GET /v1/blocks and /v1/blocks/{block_key}', () => {
  it("lists the caller's blocks with their settings (defaults applied), never another client's", async () => {
    const second = (await createBlockWithSettings(owner.username, { rows: 4, max_rows: 20, envelope: 'legacy' })).block_key;
    const list = await request<ApiBody<'blocksList'>>(blocksUrl(), { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.map((b) => b.block_key)).toEqual([blockKey, second]);
    expect(list.body[0].settings).toEqual({
      name: 'Home',
      rows: 10,
      max_rows: 50,
      max_age_days: 30,
      freshness_hours: 48,
      envelope: 'smart-section',
      weights: { covisit: 1, content: 0.35, preferences: 0.6, popularity: 0.3, freshness: 0.2 },
      hosts: null,
      category_display: {},
      pins: [],
      exclude: { urls: [], categories: [] },
      variants: [],
    });
    expect(list.body[1].settings).toMatchObject({ rows: 4, max_rows: 20, envelope: 'legacy' });
    const others = await request<ApiBody<'blocksList'>>(blocksUrl(), { token: other.token });
    expect(others.body.map((b) => b.block_key)).toEqual([othersBlock]);

    expect((await request<ApiBody<'blocksGet'>>(blocksUrl(second), { token: owner.token })).body).toEqual(list.body[1]);
  });

  it("answers 404 for another client's block and an unknown key, 401 without a valid token", async () => {
    for (const key of [othersBlock, 'no-such-block']) {
      expect(await request(blocksUrl(key), { token: owner.token })).toMatchObject({ status: 404, body: { status: 404, cause: 'Unknown block key' } });
      expect(await put(key, { rows: 3 })).toMatchObject({ status: 404, body: { status: 404, cause: 'Unknown block key' } });
    }
    // The other client's block is untouched.
    expect(await resolvePublicKey('block', othersBlock)).not.toHaveProperty('rows');
    for (const token of [undefined, 'not-a-token']) {
      expect((await request(blocksUrl(), { token })).status).toBe(401);
      expect((await request(blocksUrl(blockKey), { token })).status).toBe(401);
      expect((await request(blocksUrl(blockKey), { method: 'PUT', body: { rows: 3 }, token })).status).toBe(401);
    }
  });
});

describe('PUT /v1/blocks/{block_key}', () => {
  it('merges the given top-level settings, keeps the others, resets one given null, and stores pin and exclusion URLs canonical', async () => {
    const key = (await createBlockWithSettings(owner.username, { name: 'Merge', rows: 6, weights: { covisit: 2 } })).block_key;
    const until = '2099-01-01T00:00:00Z';
    const reply = await put(key, {
      max_rows: 30,
      weights: { popularity: 1.5 },
      category_display: { sport: 'Sports' },
      hosts: ['News.Blocks.Example'],
      pins: [{ url: 'https://news.blocks.example/a?utm_source=x#top', position: 2, until }, { url: 'https://x.blogs.example/b', position: 1, until: 4_070_908_800 }],
      exclude: { urls: ['HTTPS://news.blocks.example/old'], categories: ['ads'] },
      variants: [{ name: 'heavy-covisit', share: 20, weights: { covisit: 3 } }, { name: 'control', share: 10, holdout: true }],
    });
    expect(reply.status).toBe(200);
    expect(reply.body.settings).toMatchObject({
      name: 'Merge',
      rows: 6,
      max_rows: 30,
      // Top-level merge: `weights` as given replaces the stored one (covisit is back to its default).
      weights: { covisit: 1, content: 0.35, preferences: 0.6, popularity: 1.5, freshness: 0.2 },
      category_display: { sport: 'Sports' },
      hosts: ['news.blocks.example'],
      pins: [{ url: 'https://news.blocks.example/a', position: 2, until: 4_070_908_800 }, { url: 'https://x.blogs.example/b', position: 1, until: 4_070_908_800 }],
      exclude: { urls: ['https://news.blocks.example/old'], categories: ['ads'] },
      variants: [{ name: 'heavy-covisit', share: 20, weights: { covisit: 3 } }, { name: 'control', share: 10, holdout: true }],
    });
    expect((await request(blocksUrl(key), { token: owner.token })).body).toEqual(reply.body);
    // What the recommendations read: the stored item.
    expect(await resolvePublicKey('block', key)).toMatchObject({ maxRows: 30, categoryDisplay: { sport: 'Sports' }, exclude: { urls: ['https://news.blocks.example/old'], categories: ['ads'] } });

    const reset = await put(key, { rows: null, pins: null });
    expect(reset.body.settings).toMatchObject({ rows: 10, max_rows: 30, pins: [] });
    expect(await resolvePublicKey('block', key)).not.toHaveProperty('rows');
  });

  it('refuses every invalid setting with a cause naming it, and writes nothing', async () => {
    const key = (await createBlockWithSettings(owner.username, { max_rows: 10 })).block_key;
    const before = await resolvePublicKey('block', key);
    const past = Math.floor(Date.now() / 1000) - 60;
    const pins = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `https://news.blocks.example/p${i}`, position: i + 1 }));
    const cases: Array<[unknown, string]> = [
      [[1, 2], 'body: must be a JSON object of block settings'],
      [{ colour: 'red' }, 'body.colour: not a block setting (one of name, rows, max_rows, max_age_days, freshness_hours, envelope, weights, hosts, category_display, pins, exclude, variants)'],
      [{ name: '' }, 'body.name: must not be empty'],
      [{ name: 'x'.repeat(101) }, 'body.name: must be at most 100 characters'],
      [{ rows: 0 }, 'body.rows: must be from 1 to 100'],
      [{ rows: 2.5 }, 'body.rows: must be an integer'],
      [{ rows: '5' }, 'body.rows: must be a number'],
      [{ max_rows: 101 }, 'body.max_rows: must be from 1 to 100'],
      [{ max_age_days: 0 }, 'body.max_age_days: must be from 0.01 to 3650'],
      [{ freshness_hours: 721 }, 'body.freshness_hours: must be from 0 to 720'],
      [{ envelope: 'xml' }, 'body.envelope: must be smart-section or legacy'],
      [{ weights: [1] }, 'body.weights: must be an object of weights'],
      [{ weights: { clicks: 1 } }, 'body.weights.clicks: not a signal (one of covisit, content, preferences, popularity, freshness)'],
      [{ weights: { covisit: 101 } }, 'body.weights.covisit: must be from 0 to 100'],
      [{ hosts: 'news.blocks.example' }, 'body.hosts: must be an array'],
      [{ hosts: ['https://news.blocks.example/'] }, 'body.hosts[0]: must be a host name (e.g. news.example.com)'],
      [{ category_display: { sport: 3 } }, 'body.category_display.sport: must be a string'],
      [{ category_display: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`c${i}`, 'x'])) }, 'body.category_display: at most 100 categories'],
      [{ pins: {} }, 'body.pins: must be an array'],
      [{ pins: pins(21) }, 'body.pins: at most 20 entries'],
      [{ pins: ['https://news.blocks.example/a'] }, 'body.pins[0]: must be an object {url, position, until?}'],
      [{ pins: [{ url: 'https://news.blocks.example/a', position: 1, at: 3 }] }, 'body.pins[0].at: not a pin field (url, position, until)'],
      [{ pins: [{ url: 'ftp://news.blocks.example/a', position: 1 }] }, 'body.pins[0].url: must be an absolute http(s) URL'],
      [{ pins: [{ url: 'https://evil.example/a', position: 1 }] }, "body.pins[0].url: host evil.example is not one of the client's site hosts"],
      [{ pins: [{ url: 'https://news.blocks.example/a', position: 0 }] }, 'body.pins[0].position: must be from 1 to 100'],
      [{ pins: [{ url: 'https://news.blocks.example/a', position: 11 }] }, 'body.pins[0].position: must be from 1 to max_rows (10)'],
      [{ pins: [{ url: 'https://news.blocks.example/a', position: 2 }, { url: 'https://news.blocks.example/b', position: 2 }] }, 'body.pins[1].position: position 2 is pinned twice'],
      [{ pins: [{ url: 'https://news.blocks.example/a', position: 1, until: 'next week' }] }, 'body.pins[0].until: must be Unix seconds or an ISO 8601 date'],
      [{ pins: [{ url: 'https://news.blocks.example/a', position: 1, until: past }] }, 'body.pins[0].until: is in the past'],
      [{ exclude: ['https://news.blocks.example/a'] }, 'body.exclude: must be an object {urls, categories}'],
      [{ exclude: { guids: [] } }, 'body.exclude.guids: not an exclusion (urls, categories)'],
      [{ exclude: { urls: ['https://evil.example/a'] } }, "body.exclude.urls[0]: host evil.example is not one of the client's site hosts"],
      [{ exclude: { urls: Array.from({ length: 1001 }, (_, i) => `https://news.blocks.example/${i}`) } }, 'body.exclude.urls: at most 1000 entries'],
      [{ exclude: { categories: Array.from({ length: 101 }, (_, i) => `c${i}`) } }, 'body.exclude.categories: at most 100 entries'],
      [{ exclude: { categories: [7] } }, 'body.exclude.categories[0]: must be a string'],
      [{ variants: [{ name: 'a b', share: 10 }] }, 'body.variants[0].name: must be 1 to 32 letters, digits, "_" or "-"'],
      [{ variants: [{ name: 'x'.repeat(33), share: 10 }] }, 'body.variants[0].name: must be 1 to 32 letters, digits, "_" or "-"'],
      [{ variants: [{ name: 'default', share: 10 }] }, 'body.variants[0].name: "default" is reserved (default, newsletter)'],
      [{ variants: [{ name: 'newsletter', share: 10 }] }, 'body.variants[0].name: "newsletter" is reserved (default, newsletter)'],
      [{ variants: [{ name: 'a', share: 10 }, { name: 'a', share: 10 }] }, 'body.variants[1].name: "a" is named twice'],
      // Names differing only by case would be two variants in the settings and one in a reader's eyes (or a report's).
      [{ variants: [{ name: 'A', share: 10 }, { name: 'a', share: 10 }] }, 'body.variants[1].name: "a" is named twice (names are compared regardless of case)'],
      [{ variants: [{ name: 'Default', share: 10 }] }, 'body.variants[0].name: "Default" is reserved (default, newsletter)'],
      [{ variants: [{ name: 'a', share: 101 }] }, 'body.variants[0].share: must be from 0 to 100'],
      [{ variants: [{ name: 'a', share: 60 }, { name: 'b', share: 41 }] }, 'body.variants: the shares add up to more than 100'],
      [{ variants: [{ name: 'a', share: 10, holdout: true }, { name: 'b', share: 10, holdout: true }] }, 'body.variants: at most one holdout variant'],
      [{ variants: [{ name: 'a', share: 10, holdout: 'yes' }] }, 'body.variants[0].holdout: must be true or false'],
      [{ variants: [{ name: 'a', share: 10, weights: { covisit: -1 } }] }, 'body.variants[0].weights.covisit: must be from 0 to 100'],
      [{ variants: [{ name: 'a', share: 10, colour: 'red' }] }, 'body.variants[0].colour: not a variant field (name, share, weights, holdout)'],
      [{ variants: Array.from({ length: 11 }, (_, i) => ({ name: `v${i}`, share: 1 })) }, 'body.variants: at most 10 entries'],
      // Names every object has (its prototype's) are not settings, nor signals.
      [{ constructor: 1 }, 'body.constructor: not a block setting (one of name, rows, max_rows, max_age_days, freshness_hours, envelope, weights, hosts, category_display, pins, exclude, variants)'],
      [{ weights: { toString: 5 } }, 'body.weights.toString: not a signal (one of covisit, content, preferences, popularity, freshness)'],
      [{ rows: 20 }, 'body.rows: rows (20) must not be more than max_rows (10)'],
      // 1,000 long URLs: more than the item may hold.
      [{ exclude: { urls: Array.from({ length: 1000 }, (_, i) => `https://news.blocks.example/${'x'.repeat(400)}/${i}`) } }, "body.exclude: the block's settings would take 425 KB, more than 300 KB"],
    ];
    for (const [body, cause] of cases) {
      const reply = await put(key, body);
      expect({ body, reply: reply.body }).toEqual({ body, reply: { status: 400, cause } });
    }
    // A valid setting next to an invalid one is not written either.
    expect((await put(key, { rows: 3, envelope: 'xml' })).status).toBe(400);
    expect(await resolvePublicKey('block', key)).toEqual(before);
    // Lowering max_rows below a pin's position is refused by the pin it would cut off.
    expect((await put(key, { pins: [{ url: 'https://news.blocks.example/a', position: 8 }] })).status).toBe(200);
    expect((await put(key, { max_rows: 5 })).body).toEqual({ status: 400, cause: 'body.max_rows: 5 is less than the position of pin 0 (8)' });
  });

  it('reaches a warm recommendation container within BLOCK_KEY_CACHE_SECONDS', async () => {
    expect(BLOCK_KEY_CACHE_SECONDS).toBeLessThanOrEqual(30);
    const key = (await createBlockWithSettings(owner.username, {})).block_key;
    for (const slug of ['one', 'two', 'three']) {
      const reply = await request(`${service.url}/v1/track/${owner.trackingKey}`, { method: 'POST', body: { user_id: `crowd-${slug}`, url: `https://news.blocks.example/${slug}`, title: slug } });
      expect(reply.status).toBe(200);
    }
    await service.drain();
    dropReadCaches();
    const recos = async () => (await request<RecommendationsBody>(`${service.url}/v1/clients/${key}/users/reader/recommendations`)).body.result.recommendation.map((r) => r.guid);
    expect(await recos()).toHaveLength(3);
    expect((await put(key, { exclude: { urls: ['https://news.blocks.example/two'] } })).status).toBe(200);
    // This container still has its copy of the block: the change is not seen yet.
    expect(await recos()).toContain(articleGuid('https://news.blocks.example/two'));
    // The cache period later (the block key's copy reads the monotonic clock, the content copies Date.now).
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + BLOCK_KEY_CACHE_SECONDS * 1000);
    monotonicAhead(BLOCK_KEY_CACHE_SECONDS * 1000);
    const after = await recos();
    expect(after).toHaveLength(2);
    expect(after).not.toContain(articleGuid('https://news.blocks.example/two'));
  });
});

describe('admin CLI', () => {
  const admin = async (...args: string[]) => JSON.parse((await run(resolve(root, 'node_modules/.bin/tsx'), ['infra/admin.ts', ...args], { cwd: root, env: process.env })).stdout) as Record<string, unknown>;

  it('block-settings and create-block validate as PUT /v1/blocks/{block_key} does', { timeout: 120_000 }, async () => {
    const changed = await admin('block-settings', owner.username, blockKey, '--settings', '{"rows": 7, "exclude": {"categories": ["ads"]}}');
    expect(changed).toMatchObject({ username: owner.username, block_key: blockKey, settings: { rows: 7, exclude: { urls: [], categories: ['ads'] } } });
    expect((await request<ApiBody<'blocksGet'>>(blocksUrl(blockKey), { token: owner.token })).body.settings).toMatchObject({ rows: 7 });
    const bad = '{"pins": [{"url": "https://evil.example/a", "position": 1}]}';
    const cause = "body.pins[0].url: host evil.example is not one of the client's site hosts";
    expect((await put(blockKey, JSON.parse(bad))).body.cause).toBe(cause);
    await expect(admin('block-settings', owner.username, blockKey, '--settings', bad)).rejects.toThrow(cause);
    await expect(admin('create-block', owner.username, '--settings', bad)).rejects.toThrow(cause);
    await expect(admin('block-settings', owner.username, othersBlock, '--settings', '{"rows": 2}')).rejects.toThrow('Unknown block key');
    const created = await admin('create-block', owner.username, '--settings', '{"name": "CLI", "rows": 3}');
    expect(created).toMatchObject({ username: owner.username, settings: { name: 'CLI', rows: 3 } });
    expect((await request<ApiBody<'blocksList'>>(blocksUrl(), { token: owner.token })).body.map((b) => b.block_key)).toContain(created.block_key);
  });

  it('backfill-blocks lists the blocks made before the listing', { timeout: 120_000 }, async () => {
    const key = (await createBlockWithSettings(other.username, { name: 'Old' })).block_key;
    // A block of before the listing: its key item only.
    await ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.clientBlock(other.username, key) }));
    expect((await request<ApiBody<'blocksList'>>(blocksUrl(), { token: other.token })).body.map((b) => b.block_key)).not.toContain(key);
    const out = await admin('backfill-blocks', other.username);
    expect(out.block_keys).toEqual([othersBlock, key].sort());
    expect((await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.clientBlock(other.username, key) }))).Item).toBeDefined();
    expect((await request<ApiBody<'blocksList'>>(blocksUrl(), { token: other.token })).body.map((b) => b.block_key)).toEqual([othersBlock, key]);
  });
});
