import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBlock, createClient, createForm, getClient, rotateApiKey, setSiteHosts } from '../../shared/clients/clients.js';
import { createList, listLists } from '../../shared/lists/lists.js';
import { setFeed } from '../../shared/recos/feeds.js';

export interface DemoClientFile {
  base_url: string;
  username: string;
  api_key: string;
  tracking_key: string;
  block_key: string;
  form_key: string;
  global_form_key: string;
  list_ids: number[];
  other: { username: string; api_key: string; list_ids: number[] };
}

const DEMO = 'demo';
const OTHER = 'other-publisher';
/** The demo site is served by the local gateway (`npm start`): the demo client's pages live on these hosts. */
const DEMO_SITE_HOSTS = ['localhost', '127.0.0.1'];

/**
 * Gives the demo client its site hosts when it has none (e.g. seeded before
 * site hosts existed) and the demo site's feed as its catalogue feed when it
 * has none; what was set by hand stays.
 */
async function ensureDemoHosts(baseUrl: string): Promise<void> {
  const demo = await getClient(DEMO);
  if (demo && !(demo.siteHosts && demo.siteHosts.length > 0)) await setSiteHosts(DEMO, DEMO_SITE_HOSTS);
  const feed = `${baseUrl}/demo/feed.xml`;
  // The seeded feed follows the port `npm start` runs on; another URL set by hand stays.
  if (demo && (!demo.feed || (demo.feed.url.endsWith('/demo/feed.xml') && demo.feed.url !== feed))) await setFeed(DEMO, feed);
}

async function ensureClient(username: string, premiumEvents: boolean): Promise<{ apiKey: string; trackingKey: string; created: boolean }> {
  const existing = await getClient(username);
  if (existing) return { apiKey: await rotateApiKey(username), trackingKey: existing.trackingKey, created: false };
  const { client, apiKey } = await createClient(username, { premiumEvents });
  return { apiKey, trackingKey: client.trackingKey, created: true };
}

/**
 * Seeds the demo client and a second client on first start and writes
 * `DATA_DIR/demo-client.json`. A later start reuses the file while its
 * clients still exist; otherwise it reseeds (a new API key, same lists).
 */
export async function seedDemo(dataDir: string, baseUrl: string): Promise<DemoClientFile> {
  const file = join(dataDir, 'demo-client.json');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoClientFile;
    if ((await getClient(saved.username)) && (await getClient(saved.other.username))) {
      await ensureDemoHosts(baseUrl);
      const updated = { ...saved, base_url: baseUrl };
      writeFileSync(file, JSON.stringify(updated, null, 2));
      return updated;
    }
  }
  const demo = await ensureClient(DEMO, true);
  await ensureDemoHosts(baseUrl);
  if ((await listLists(DEMO)).length < 2) await createList(DEMO, 'Weekly digest');
  const listIds = (await listLists(DEMO)).map((l) => l.id);
  const other = await ensureClient(OTHER, false);
  const seeded: DemoClientFile = {
    base_url: baseUrl,
    username: DEMO,
    api_key: demo.apiKey,
    tracking_key: demo.trackingKey,
    block_key: await createBlock(DEMO, { name: 'Demo smart section' }),
    form_key: await createForm(DEMO, { listIds: [listIds[0]], global: false }),
    global_form_key: await createForm(DEMO, { listIds, global: true }),
    list_ids: listIds,
    other: { username: OTHER, api_key: other.apiKey, list_ids: (await listLists(OTHER)).map((l) => l.id) },
  };
  writeFileSync(file, JSON.stringify(seeded, null, 2));
  return seeded;
}
