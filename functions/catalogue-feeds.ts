/** Job: polls the clients' catalogue feeds and upserts their articles. */
import { jobHandler } from '../shared/observability/index.js';
import { pollFeeds } from '../shared/recos/feeds.js';

export const handler = jobHandler('catalogueFeeds', async () => pollFeeds());
