/**
 * Recommendation statistics off the request path: answers and valid clicks queue a small message; the `trackingViews`
 * job sums a batch per client, block, variant and UTC day into one UpdateItem each. Pure rules here; the consumer
 * is view-queue.ts, the storage dynamo-reco-counts.ts.
 */

/** What one request adds to its block's counters. */
export interface RecoCount {
  clientId: string;
  blockKey: string;
  variant: string;
  /** Unix seconds (the UTC day it counts on). */
  t: number;
  served: number;
  impressions: number;
  clicks: number;
}

/** The sums of one counter item (client, block, variant, day) and the messages they came from. */
export interface RecoCountGroup {
  clientId: string;
  blockKey: string;
  variant: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  served: number;
  impressions: number;
  clicks: number;
  ids: string[];
}

/** Storage of the daily counters. */
export interface RecoCountStore {
  /** Adds one group's sums to its day's item (creating it). */
  addCounts(group: RecoCountGroup): Promise<void>;
}

/** The UTC day of a Unix time in seconds. */
export const utcDay = (t: number): string => new Date(t * 1000).toISOString().slice(0, 10);

const count = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 1000;

/** A count from a queued message's `count` field; undefined when it is not one. */
export function parseRecoCount(clientId: unknown, t: unknown, c: Partial<RecoCount> | undefined): RecoCount | undefined {
  if (typeof clientId !== 'string' || typeof t !== 'number' || !Number.isFinite(t) || !c || typeof c !== 'object') return undefined;
  if (typeof c.blockKey !== 'string' || typeof c.variant !== 'string' || !count(c.served) || !count(c.impressions) || !count(c.clicks)) return undefined;
  return { clientId, t, blockKey: c.blockKey, variant: c.variant, served: c.served!, impressions: c.impressions!, clicks: c.clicks! };
}

/** A batch's counts summed per (client, block, variant, UTC day), with the ids of the messages in each group. */
export function groupRecoCounts(counts: Array<RecoCount & { id: string }>): RecoCountGroup[] {
  const groups = new Map<string, RecoCountGroup>();
  for (const c of counts) {
    const day = utcDay(c.t);
    const key = JSON.stringify([c.clientId, c.blockKey, c.variant, day]);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { clientId: c.clientId, blockKey: c.blockKey, variant: c.variant, day, served: 0, impressions: 0, clicks: 0, ids: [] }));
    g.served += c.served;
    g.impressions += c.impressions;
    g.clicks += c.clicks;
    g.ids.push(c.id);
  }
  return [...groups.values()];
}

/**
 * Applies the groups (at most `concurrency` at once); answers the ids of the
 * messages whose group failed (nothing of the group was added: they can be
 * delivered again).
 */
export async function applyRecoCounts(store: RecoCountStore, groups: RecoCountGroup[], concurrency = 8): Promise<string[]> {
  const failed: string[] = [];
  for (let i = 0; i < groups.length; i += concurrency) {
    const slice = groups.slice(i, i + concurrency);
    const results = await Promise.allSettled(slice.map((g) => store.addCounts(g)));
    results.forEach((r, k) => {
      if (r.status === 'rejected') failed.push(...slice[k].ids);
    });
  }
  return failed;
}
