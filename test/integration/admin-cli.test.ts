import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { resolvePublicKey } from '../../shared/clients/clients.js';
import { readerSignature } from '../../shared/recos/reader-ids.js';
import { dropReadCaches } from '../../shared/recos/service.js';
import { request, useService, type ApiBody, type ErrorBody } from '../helpers/service.js';

const service = useService();
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

/** Runs `npm run admin -- …` as support staff would, against the test emulators (TABLE_NAME and endpoints from this process). */
async function admin(...args: string[]): Promise<AdminOutput> {
  const { stdout } = await run(resolve(root, 'node_modules/.bin/tsx'), ['infra/admin.ts', ...args], { cwd: root, env: process.env });
  return JSON.parse(stdout) as AdminOutput;
}

/** What these tests read of the JSON the CLI prints (each command prints some of it). */
interface AdminOutput {
  api_key: string;
  tracking_key: string;
  site_hosts: string[];
  form_key: string;
  block_key: string;
  signing_secret: string;
  [key: string]: unknown;
}

describe('admin CLI', () => {
  it('creates a client whose printed API key gets a token, then lists, forms, blocks, premium and key rotation', { timeout: 120_000 }, async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const created = await admin('create-client', name);
    expect(created).toMatchObject({ username: name, default_list_id: 1 });
    const token = (await request<ApiBody<'tokenGet'>>(`${service.url}/v1/token?username=${name}&password=${encodeURIComponent(created.api_key)}`)).body.token;
    expect(token).toBeTruthy();

    expect(await admin('create-list', name, 'Weekly', 'digest')).toMatchObject({ id: 2, name: 'Weekly digest' });
    const lists = await request<ApiBody<'listsList'>>(`${service.url}/v1/newsletters/lists`, { token });
    expect(lists.body.map((l) => l.name)).toEqual(['Default list', 'Weekly digest']);

    const form = await admin('create-form', name, '--lists', '1,2', '--global');
    expect(await resolvePublicKey('form', form.form_key)).toMatchObject({ clientId: name, listIds: [1, 2], global: true });
    const block = await admin('create-block', name, '--settings', '{"name":"Home"}');
    expect(await resolvePublicKey('block', block.block_key)).toMatchObject({ clientId: name, name: 'Home' });

    expect(await admin('enable-premium', name)).toEqual({ username: name, premium_events: true });
    expect(await admin('show-client', name)).toMatchObject({ id: name, premiumEvents: true });

    const rotated = await admin('rotate-key', name);
    expect((await request(`${service.url}/v1/token?username=${name}&password=${encodeURIComponent(created.api_key)}`)).status).toBe(401);
    // Every token issued with the old key is revoked at once.
    const revoked = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`, { token });
    expect(revoked.status).toBe(401);
    expect(revoked.body.cause).toMatch(/^Token revoked/);
    expect((await request(`${service.url}/v1/token?username=${name}&password=${encodeURIComponent(rotated.api_key)}`)).status).toBe(200);
  });

  it('sets the site hosts the client may track pages on (create-client --hosts, set-hosts)', { timeout: 120_000 }, async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const created = await admin('create-client', name, '--hosts', 'News.example.com, *.blogs.example.com');
    expect(created.site_hosts).toEqual(['news.example.com', '*.blogs.example.com']);
    const track = (url: string) => request(`${service.url}/v1/track/${created.tracking_key}`, { method: 'POST', body: { user_id: 'u', url } });
    expect((await track('https://news.example.com/a')).status).toBe(200);
    expect((await track('https://other.example/a')).status).toBe(403);

    expect(await admin('set-hosts', name, '--hosts', 'other.example')).toEqual({ username: name, site_hosts: ['other.example'] });
    expect(await admin('show-client', name)).toMatchObject({ siteHosts: ['other.example'] });
    // A new container: a warm one applies set-hosts to tracking within TRACKING_KEY_CACHE_SECONDS (recos-tracking-queue.test.ts).
    dropReadCaches();
    expect((await track('https://other.example/a')).status).toBe(200);
    expect((await track('https://news.example.com/a')).status).toBe(403);
    await expect(admin('set-hosts', name, '--hosts', 'https://x.example/')).rejects.toThrow(/hosts: "https:\/\/x\.example\/" is not a host name/);
    await expect(admin('set-hosts', name)).rejects.toThrow(/set-hosts needs --hosts/);
  });

  it('turns signed reader ids on and off and rotates the signing secret (set-signed-ids)', { timeout: 120_000 }, async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    await admin('create-client', name, '--hosts', 'signed.example');
    const on = await admin('set-signed-ids', name, '--on');
    expect(on).toEqual({ username: name, signed_ids: true, signing_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as string });
    expect(await admin('show-client', name)).toMatchObject({ signedIds: true, signingSecret: on.signing_secret });
    const block = await admin('create-block', name);
    const recos = (sig?: string) => request(`${service.url}/v1/clients/${block.block_key}/users/member-1/recommendations${sig ? `?sig=${sig}` : ''}`);
    expect((await recos()).status).toBe(403);
    expect((await recos(readerSignature(on.signing_secret, 'member-1'))).status).toBe(200);
    const rotated = await admin('set-signed-ids', name, '--on', '--rotate');
    expect(rotated.signing_secret).not.toBe(on.signing_secret);
    expect((await recos(readerSignature(on.signing_secret, 'member-1'))).status).toBe(403);
    expect((await recos(readerSignature(rotated.signing_secret, 'member-1'))).status).toBe(200);
    expect(await admin('set-signed-ids', name, '--off')).toMatchObject({ signed_ids: false });
    expect((await recos()).status).toBe(200);
    await expect(admin('set-signed-ids', name)).rejects.toThrow(/needs --on or --off/);
  });

  it('refuses a form over a list the client does not have', { timeout: 60_000 }, async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    await admin('create-client', name);
    await expect(admin('create-form', name, '--lists', '7')).rejects.toThrow(/Unknown list 7/);
  });
});
