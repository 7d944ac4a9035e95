/**
 * Builds every key of the single table. No other module spells a key string.
 */
export type KeyKind = 'tracking' | 'form' | 'block';

const pad = (n: number, width = 10) => String(n).padStart(width, '0');

/** The gsi1 partition of unfinished imports (a few items at any time: they leave it when they end). */
export const UNFINISHED_IMPORTS = 'IMPORTS#UNFINISHED';

/** The gsi1 partition of clients with a catalogue feed. */
export const CLIENTS_WITH_FEED = 'FEEDS';

/** Client and file of an unfinished import's gsi1 sort key. */
export function unfinishedImportOf(gsi1sk: string): { clientId: string; fileId: number } {
  const at = gsi1sk.lastIndexOf('#');
  return { clientId: gsi1sk.slice(0, at), fileId: Number(gsi1sk.slice(at + 1)) };
}

export const keys = {
  /** The partition of a client's Idempotency-Key records (shared/http/idempotency.ts; sort key `<route>#<hash>`, expiring by `ttl`). */
  idempotencyPartition: (clientId: string) => `IDEM#${clientId}`,
  /** The client record (credentials hash, settings). */
  client: (clientId: string) => ({ pk: `CLIENT#${clientId}`, sk: 'CLIENT' }),
  /** Lookup item for a public key (tracking, form or block key) → its client. */
  publicKey: (kind: KeyKind, key: string) => ({ pk: `KEY#${kind}#${key}`, sk: 'KEY' }),
  /** Temporary client token, keyed by the SHA-256 of the token. */
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** Atomic counter allocating the next id of a per-client sequence. */
  counter: (clientId: string, sequence: 'list' | 'file') => ({ pk: `CLIENT#${clientId}`, sk: `COUNTER#${sequence}` }),
  /** A list of a client; lists sort by id. */
  list: (clientId: string, listId: number) => ({ pk: `CLIENT#${clientId}`, sk: `LIST#${pad(listId)}` }),
  /** Prefix for querying all lists of a client. */
  listPrefix: () => 'LIST#',
  /** A webhook endpoint of a client (shared/webhooks/store.ts). */
  webhook: (clientId: string, id: string) => ({ pk: `CLIENT#${clientId}`, sk: `WEBHOOK#${id}` }),
  webhookPrefix: () => 'WEBHOOK#',
  /** The version of a client's set of webhooks: a registration commits only if no other did since it counted them (shared/webhooks/store.ts). */
  webhookSet: (clientId: string) => ({ pk: `CLIENT#${clientId}`, sk: 'WEBHOOKSET' }),
  /** A subscriber of a list, by normalised (lower-cased) email. */
  subscriber: (clientId: string, listId: number, email: string) => ({
    pk: `SUBS#${clientId}#${listId}`,
    sk: `SUB#${email}`,
  }),
  subscriberPrefix: () => 'SUB#',
  subscribersPartition: (clientId: string, listId: number) => `SUBS#${clientId}#${listId}`,
  /** GSI1: subscribers of a list with one status, sorted by email. */
  subscriberByStatus: (clientId: string, listId: number, subscribed: boolean, email: string) => ({
    gsi1pk: keys.subscribersByStatusPartition(clientId, listId, subscribed),
    gsi1sk: email,
  }),
  subscribersByStatusPartition: (clientId: string, listId: number, subscribed: boolean) =>
    `SUBST#${clientId}#${listId}#${subscribed ? 'subscribed' : 'unsubscribed'}`,
  /** GSI2: all lists of one email within a client. */
  subscriberByEmail: (clientId: string, email: string, listId: number) => ({
    gsi2pk: keys.emailPartition(clientId, email),
    gsi2sk: `LIST#${pad(listId)}`,
  }),
  emailPartition: (clientId: string, email: string) => `EMAIL#${clientId}#${email}`,
  /** One shard of a list's subscriber counters (the stream consumer adds to shard 0); the count is the sum of the shards. */
  counterShard: (clientId: string, listId: number, shard: number) => ({ pk: keys.countersPartition(clientId, listId), sk: `SHARD#${pad(shard, 2)}` }),
  countersPartition: (clientId: string, listId: number) => `COUNTS#${clientId}#${listId}`,
  /**
   * One shard of a list's changes on one UTC day (statistics, shared/subscribers/daily.ts): the stream consumer
   * adds to shard 0 in the transaction that moves the counters; sort keys order by day.
   */
  listDayShard: (clientId: string, listId: number, day: string, shard: number) => ({ pk: keys.listDaysPartition(clientId, listId), sk: `DAY#${day}#${pad(shard, 2)}` }),
  listDaysPartition: (clientId: string, listId: number) => `DAYS#${clientId}#${listId}`,
  /** Sort key from which a list's day shards of `day` and later sort. */
  listDayFrom: (day: string) => `DAY#${day}`,
  /**
   * A client's event counts of one UTC day (shared/stats/events-daily.ts): `h_<event>_<HH>` = rows of an hour
   * the hourly job built, `d_<event>` = rows of the day's file the daily job built.
   */
  eventDayCounts: (clientId: string, day: string) => ({ pk: keys.eventDayCountsPartition(clientId), sk: `DAY#${day}` }),
  eventDayCountsPartition: (clientId: string) => `EVDAYS#${clientId}`,
  /**
   * The tags of the stream records the stream consumer applied to a list's counters within one second of their
   * writes, in one of 8 slots (shared/subscribers/stream-consumer.ts): a retried record is found there and skipped;
   * expires by `ttl`.
   */
  streamApplied: (clientId: string, listId: number, second: number, slot: number) => ({ pk: `APPLIED#${clientId}#${listId}`, sk: `S#${pad(second, 12)}#${slot}` }),
  /** A pending double opt-in of one email on one form of a client. */
  optinPending: (clientId: string, email: string, formKey: string) => ({ pk: keys.optinPendingPartition(clientId, email), sk: `FORM#${formKey}` }),
  optinPendingPartition: (clientId: string, email: string) => `OPTIN#${clientId}#${email}`,
  /**
   * Where an address's confirmation links are found (users/delete deletes them): one entry per link mailed,
   * in the partition of the address's pending opt-ins, which outlives the pending item (confirmed links too).
   */
  optinTokenRef: (clientId: string, email: string, tokenHash: string) => ({ pk: keys.optinPendingPartition(clientId, email), sk: `TOKEN#${tokenHash}` }),
  optinTokenRefPrefix: () => 'TOKEN#',
  /** A confirmation link, keyed by the SHA-256 of its token (the token itself is never stored). */
  optinToken: (tokenHash: string) => ({ pk: `OPTINTOKEN#${tokenHash}`, sk: 'OPTINTOKEN' }),
  /** GSI1 keys of a pending opt-in whose reminder is due at `dueAt` (ISO): one partition per due day; removed once reminded. */
  optinReminderDue: (dueAt: string) => ({ gsi1pk: `OPTINDUE#${dueAt.slice(0, 10)}`, gsi1sk: dueAt }),
  optinReminderDay: (day: string) => `OPTINDUE#${day}`,
  /** A fixed-window rate-limit counter (atomic ADD, expires by `ttl`). */
  rateLimit: (scope: string, window: number) => ({ pk: `RL#${scope}#${window}`, sk: 'RL' }),
  /** An article of a client's recommendation catalogue, by its guid (hash of the canonical URL). */
  article: (clientId: string, guid: string) => ({ pk: `ART#${clientId}#${guid}`, sk: 'ART' }),
  /** gsi1 partition of a client's articles, sorted by their decayed-popularity score (`hotSortKey`). */
  articlesByHotness: (clientId: string) => `ARTHOT#${clientId}`,
  /** gsi2 keys of an article in its client's catalogue by publication time (newest first when queried backwards). */
  articleByPublished: (clientId: string, published: number, guid: string) => ({ gsi2pk: keys.articlesByPublished(clientId), gsi2sk: publishedSortKey(published, guid) }),
  /** gsi2 partition of a client's articles by publication time. */
  articlesByPublished: (clientId: string) => `ARTNEW#${clientId}`,
  /**
   * The page-view consumer's snapshot of a client's most popular articles (their ranking fields, one packed attribute): a
   * container without its own copy reads it instead of querying gsi1 (shared/recos/read-cache.ts). Next to it, sort key
   * `POPULARTURN`: when a consumer last took the turn to rewrite it (`POPULAR_SNAPSHOT_TURN` in shared/recos/dynamo-views.ts).
   */
  popularSnapshot: (clientId: string) => ({ pk: `ARTHOT#${clientId}`, sk: 'POPULAR' }),
  /** A client's newest catalogue articles (attributes `p_<guid>` = publication time): the fresh candidates of recommendations. */
  freshArticles: (clientId: string) => ({ pk: `ARTFRESH#${clientId}`, sk: 'FRESH' }),
  /** A counter every fresh-list addition bumps: a container's copy of the fresh list is current while it matches. */
  freshVersion: (clientId: string) => ({ pk: `ARTFRESH#${clientId}`, sk: 'FRESHVER' }),
  /**
   * Articles of a client deleted in one window of `DELETION_WINDOW` seconds starting at `windowStart` (attributes
   * `d_<guid>` = deletion time): recommendations read the current and the previous window to leave out deleted
   * articles that a container's short-lived cache still holds. Expires by `ttl`.
   */
  articleDeletions: (clientId: string, windowStart: number) => ({ pk: `ARTDEL#${clientId}`, sk: `DEL#${windowStart}` }),
  /** Prefix of every article key of a client (cursor checks). */
  articlePrefix: (clientId: string) => `ART#${clientId}#`,
  /** The co-visit counts of an article ("readers of this page also read"), next to the article. */
  covisits: (clientId: string, guid: string) => ({ pk: `ART#${clientId}#${guid}`, sk: 'COVISIT' }),
  /** The page-view consumer's snapshot of an article's strongest co-read articles (their ranking fields), next to the article. */
  neighbours: (clientId: string, guid: string) => ({ pk: `ART#${clientId}#${guid}`, sk: 'NEIGH' }),
  /**
   * A block's recommendation counters of one UTC day and variant (`served`, `impressions`, `clicks`, added to by the
   * page-view consumer): a client's items sort by day, so a date range is one Query of its partition.
   */
  recoCounts: (clientId: string, day: string, blockKey: string, variant: string) => ({ pk: keys.recoCountsPartition(clientId), sk: `${day}#${blockKey}#${variant}` }),
  recoCountsPartition: (clientId: string) => `RSTAT#${clientId}`,
  /** A reader's recent reads and implicit theme tastes (user id = subscriber guid, spec 2.3). */
  reader: (clientId: string, userId: string) => ({ pk: `RDR#${clientId}#${userId}`, sk: 'READS' }),
  /** A reader's explicit theme preferences (spec 4.13). */
  readerPreferences: (clientId: string, userId: string) => ({ pk: `RDR#${clientId}#${userId}`, sk: 'PREFS' }),
  /** gsi1 keys of a client that has a catalogue feed (the feed job's work list). */
  clientWithFeed: (clientId: string) => ({ gsi1pk: CLIENTS_WITH_FEED, gsi1sk: clientId }),
  /** An imported file of a client (status, progress, checkpoint); files sort by id. */
  file: (clientId: string, fileId: number) => ({ pk: `CLIENT#${clientId}`, sk: `FILE#${pad(fileId)}` }),
  /** A newsletter-picks job (shared/picks/jobs.ts): status, checkpoint and result of one large list's picks. */
  picksJob: (clientId: string, jobId: string) => ({ pk: `CLIENT#${clientId}`, sk: `PICKSJOB#${jobId}` }),
  /** GSI1 keys of an import not finished yet (uploaded or processing), for the sweeper; removed when it ends. */
  unfinishedImport: (clientId: string, fileId: number) => ({ gsi1pk: UNFINISHED_IMPORTS, gsi1sk: `${clientId}#${pad(fileId)}` }),
  /** Prefix for querying all imported files of a client. */
  filePrefix: () => 'FILE#',
  /** A client's recommendation block (the listing of `GET /v1/blocks`); the block's settings stay on its key item (`publicKey('block', key)`). */
  clientBlock: (clientId: string, blockKey: string) => ({ pk: `CLIENT#${clientId}`, sk: `BLOCK#${blockKey}` }),
  /** Prefix for querying all blocks of a client. */
  clientBlockPrefix: () => 'BLOCK#',
};

/** Parses the list id back out of a GSI2 sort key. */
export function listIdFromEmailSortKey(gsi2sk: string): number {
  return Number(gsi2sk.slice('LIST#'.length));
}

/** Parses the list id back out of a list item's sort key. */
export function listIdFromSortKey(sk: string): number {
  return Number(sk.slice('LIST#'.length));
}

/** gsi1 sort key of an article: its log2 popularity score, fixed width so strings sort as numbers (score ≥ 0). */
export function hotSortKey(score: number): string {
  return Math.max(0, score).toFixed(6).padStart(20, '0');
}

/** gsi2 sort key of an article by publication time: fixed-width Unix seconds, then the guid. */
export function publishedSortKey(published: number, guid: string): string {
  return `${pad(Math.max(0, Math.floor(published)), 12)}#${guid}`;
}
