import { GetCommand, PutCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { batchGet, ddb, queryAll, tableName } from '../db/client.js';
import { keys, type KeyKind } from '../db/keys.js';
import { hashApiKey, newPublicKey, newSecret } from '../auth/secrets.js';
import { createList, getList } from '../lists/lists.js';
import { BrandingSchema, type Branding } from './branding.js';
import { parseSiteHosts } from './site-hosts.js';
import { ClientExistsError, InvalidClientSettingError, UnknownClientError } from './errors.js';

export const UsernameSchema = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9_-]{1,62}$/, 'a client name is 2 to 63 characters: lower-case letters, digits, "-" and "_"'),
);

export interface Client {
  id: string;
  apiKeyHash: string;
  trackingKey: string;
  premiumEvents: boolean;
  defaultListId: number;
  createdAt: string;
  /** Per-client overrides of the opt-in rate limits (spec §8 defaults apply when absent). */
  rateLimits?: { perIpPerMinute?: number; perKeyPerMinute?: number };
  /** Hosts the client's articles live on (shared/clients/site-hosts.ts); absent or empty: no tracking, no recommendations. */
  siteHosts?: string[];
  /** Counts API key rotations (absent: 0). A token is valid only while it carries the current generation. */
  keyGeneration?: number;
  /** Signed reader ids required (shared/recos/reader-ids.ts); off when absent. */
  signedIds?: boolean;
  /** The secret reader ids are signed with (HMAC-SHA256), made when signed ids are first turned on. */
  signingSecret?: string;
  /** Lists of the client's global opt-in forms (a number set), offered by the preference centre. */
  globalFormLists?: Set<number>;
  /** The secret recommendation ids are signed with (shared/recos/recomm-ids.ts); a client made before it had one gets it on first use. */
  recommSecret?: string;
  /** Reader link secrets (shared/readers/link-secret.ts). */
  linkSecret?: string;
  previousLinkSecret?: string;
  previousLinkSecretUntil?: number;
  /** The catalogue feed the feed job polls (shared/recos/feeds.ts), with the outcome of its last polls. */
  feed?: CatalogueFeed;
  /** What reader pages and opt-in emails show of the publisher (shared/clients/branding.ts). */
  branding?: Branding;
}

/** A client's catalogue feed and what its polls found (shown by `admin show-client`). */
export interface CatalogueFeed {
  url: string;
  setAt: string;
  /** Validators of the last good answer, sent back as If-None-Match / If-Modified-Since. */
  etag?: string;
  lastModified?: string;
  lastPollAt?: string;
  /** `ok` (read and applied), `not-modified` (304) or `failed` (see lastError; the catalogue keeps what it had). */
  lastStatus?: 'ok' | 'not-modified' | 'failed';
  lastError?: string;
  lastSuccessAt?: string;
  /** Failed polls since the last success. */
  consecutiveFailures?: number;
  /** What the last applied document gave. */
  lastFormat?: string;
  lastCounts?: { created: number; updated: number; rejected: number };
  /** Why the first rejected item of the last applied document was refused. */
  firstRejection?: string;
}

/** A form (spec 4.1): a list form subscribes to its lists; a global form lets the reader pick among them. */
export interface FormKey {
  kind: 'form';
  clientId: string;
  listIds: number[];
  global: boolean;
  /** Where the confirmation link leads after confirming; a built-in page when absent. */
  confirmRedirectUrl?: string;
}

/** A recommendation block ("smart section", spec 4.11); its settings live on the key item. */
export interface BlockKey {
  kind: 'block';
  clientId: string;
  [setting: string]: unknown;
}

export interface TrackingKey {
  kind: 'tracking';
  clientId: string;
}

export type PublicKeyItem = FormKey | BlockKey | TrackingKey;

/** Reads a client by its name (the client's id); `consistent` for a read that must see a write made just before. */
export async function getClient(clientId: string, { consistent = false } = {}): Promise<Client | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.client(clientId), ConsistentRead: consistent }));
  return out.Item as Client | undefined;
}

/**
 * The client's recommendation id secret, made (once, whoever asks first) when it has none. Throws
 * UnknownClientError when there is no such client.
 */
export async function recommSecretOf(client: Pick<Client, 'id' | 'recommSecret'>): Promise<string> {
  if (client.recommSecret) return client.recommSecret;
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.client(client.id),
        UpdateExpression: 'SET recommSecret = if_not_exists(recommSecret, :secret)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':secret': newSecret() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return (out.Attributes as Client).recommSecret!;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new UnknownClientError(client.id);
    throw err;
  }
}

export async function requireClient(clientId: string): Promise<Client> {
  const client = await getClient(clientId);
  if (!client) throw new UnknownClientError(clientId);
  return client;
}

/**
 * Creates a client with its API key (returned once, stored hashed), its
 * tracking key, its recommendation id secret and its default list (used by
 * the deprecated list-less API).
 */
export async function createClient(
  username: string,
  { premiumEvents = false, siteHosts }: { premiumEvents?: boolean; siteHosts?: string | string[] } = {},
): Promise<{ client: Client; apiKey: string }> {
  const parsed = v.safeParse(UsernameSchema, username);
  if (!parsed.success) throw new InvalidClientSettingError('username', `username: ${parsed.issues[0].message}`);
  const hosts = siteHosts === undefined ? [] : parseSiteHosts(siteHosts);
  const apiKey = newSecret();
  const trackingKey = newPublicKey();
  const client: Client = {
    id: username,
    apiKeyHash: await hashApiKey(apiKey),
    trackingKey,
    premiumEvents,
    defaultListId: 0,
    createdAt: new Date().toISOString(),
    recommSecret: newSecret(),
    ...(hosts.length > 0 ? { siteHosts: hosts } : {}),
  };
  try {
    await ddb.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.client(username), type: 'client', ...client },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.publicKey('tracking', trackingKey), type: 'key', kind: 'tracking', clientId: username },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  } catch (err) {
    if ((err as Error).name === 'TransactionCanceledException') throw new ClientExistsError(username);
    throw err;
  }
  const list = await createList(username, 'Default list');
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(username),
      UpdateExpression: 'SET defaultListId = :id',
      ExpressionAttributeValues: { ':id': list.id },
    }),
  );
  return { client: { ...client, defaultListId: list.id }, apiKey };
}

/**
 * Replaces a client's API key. The old key stops working at once, and so does
 * every token issued before: the key generation moves on, and a token is
 * accepted only with the generation it was issued under.
 */
export async function rotateApiKey(clientId: string): Promise<string> {
  await requireClient(clientId);
  const apiKey = newSecret();
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: 'SET apiKeyHash = :h, keyGeneration = if_not_exists(keyGeneration, :zero) + :one',
      ExpressionAttributeValues: { ':h': await hashApiKey(apiKey), ':zero': 0, ':one': 1 },
    }),
  );
  return apiKey;
}

/**
 * Turns signed reader ids on or off; a signing secret is made the first time
 * (or anew with `rotate`). Returns the setting and the secret.
 */
export async function setSignedIds(clientId: string, on: boolean, rotate = false): Promise<{ signedIds: boolean; signingSecret?: string }> {
  const client = await requireClient(clientId);
  const signingSecret = rotate || (on && !client.signingSecret) ? newSecret() : client.signingSecret;
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: signingSecret ? 'SET signedIds = :on, signingSecret = :secret' : 'SET signedIds = :on',
      ExpressionAttributeValues: { ':on': on, ...(signingSecret ? { ':secret': signingSecret } : {}) },
    }),
  );
  return { signedIds: on, signingSecret };
}

/** Turns on a client setting such as premium events (spec §5.6). */
export async function setClientSetting(clientId: string, name: 'premiumEvents' | 'rateLimits' | 'siteHosts', value: unknown): Promise<void> {
  await requireClient(clientId);
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: 'SET #n = :v',
      ExpressionAttributeNames: { '#n': name },
      ExpressionAttributeValues: { ':v': value },
    }),
  );
}

/**
 * Changes the client's branding: each given setting replaced (validated, see
 * BrandingSchema), each of `remove` removed. Returns the branding stored.
 */
export async function setBranding(clientId: string, set: unknown, remove: Array<keyof Branding> = []): Promise<Branding> {
  const parsed = v.safeParse(BrandingSchema, set);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = issue.path?.map((p) => String(p.key)).join('.') ?? 'branding';
    throw new InvalidClientSettingError('branding', `${field}: ${issue.message}`);
  }
  const client = await requireClient(clientId);
  const next: Branding = { ...client.branding, ...parsed.output };
  for (const name of remove) delete next[name];
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: 'SET branding = :b',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':b': next },
    }),
  );
  return next;
}

/** Replaces a client's site hosts (validated; an empty list turns tracking and recommendations off). Returns the stored list. */
export async function setSiteHosts(clientId: string, siteHosts: string | string[]): Promise<string[]> {
  const hosts = parseSiteHosts(siteHosts);
  await setClientSetting(clientId, 'siteHosts', hosts);
  return hosts;
}

async function putPublicKey(kind: KeyKind, item: { clientId: string } & Record<string, unknown>): Promise<string> {
  const key = newPublicKey();
  await ddb.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.publicKey(kind, key), type: 'key', ...item, kind },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return key;
}

/** Creates a form key over some of the client's lists. */
export async function createForm(
  clientId: string,
  { listIds, global, confirmRedirectUrl }: { listIds: number[]; global: boolean; confirmRedirectUrl?: string },
): Promise<string> {
  await requireClient(clientId);
  if (listIds.length === 0) throw new InvalidClientSettingError('listIds', 'a form needs at least one list');
  for (const id of listIds) await getList(clientId, id);
  const key = await putPublicKey('form', { clientId, listIds, global, confirmRedirectUrl });
  if (global) {
    // The preference centre offers the lists of the client's global forms (shared/readers/preferences-page.ts).
    await ddb.send(
      new UpdateCommand({ TableName: tableName(), Key: keys.client(clientId), UpdateExpression: 'ADD globalFormLists :ids', ExpressionAttributeValues: { ':ids': new Set(listIds) } }),
    );
  }
  return key;
}

/**
 * Migration (`admin backfill-global-forms`): sets `globalFormLists` from the client's global forms made before
 * `createForm` kept it. One Scan of the whole table (form keys have no index by client); adds only, so reruns change
 * nothing. Returns the client's global form lists.
 */
export async function backfillGlobalFormLists(clientId: string): Promise<number[]> {
  await requireClient(clientId);
  const lists = new Set<number>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'begins_with(pk, :forms) AND clientId = :client AND #global = :yes',
        ExpressionAttributeNames: { '#global': 'global' },
        ExpressionAttributeValues: { ':forms': keys.publicKey('form', '').pk, ':client': clientId, ':yes': true },
        ExclusiveStartKey: start,
      }),
    );
    for (const form of page.Items ?? []) for (const id of (form.listIds as number[] | undefined) ?? []) lists.add(Number(id));
    start = page.LastEvaluatedKey;
  } while (start);
  if (lists.size > 0) {
    await ddb.send(new UpdateCommand({ TableName: tableName(), Key: keys.client(clientId), UpdateExpression: 'ADD globalFormLists :ids', ExpressionAttributeValues: { ':ids': lists } }));
  }
  return [...((await getClient(clientId, { consistent: true }))?.globalFormLists ?? [])].map(Number).sort((a, b) => a - b);
}

/**
 * Creates a recommendation block key with its settings (stored as given: the
 * block settings service, shared/recos/block-settings.ts, validates them
 * first), and the client's listing entry of the block (`GET /v1/blocks`), in
 * one transaction.
 */
export async function createBlock(clientId: string, settings: Record<string, unknown> = {}): Promise<string> {
  await requireClient(clientId);
  const key = newPublicKey();
  const createdAt = new Date().toISOString();
  await ddb.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: tableName(), Item: { ...keys.publicKey('block', key), type: 'key', ...settings, clientId, kind: 'block', createdAt }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: tableName(), Item: { ...keys.clientBlock(clientId, key), type: 'clientBlock', blockKey: key, createdAt } } },
      ],
    }),
  );
  return key;
}

/**
 * The client's block key items, oldest first: its listing entries (written by `createBlock`), then their key items
 * (one BatchGetItem per 100). Blocks without a listing entry appear once `admin backfill-blocks` has run.
 */
export async function listBlocks(clientId: string): Promise<Array<BlockKey & { blockKey: string }>> {
  const entries = await queryAll<{ blockKey: string; createdAt?: string }>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.client(clientId).pk, ':prefix': keys.clientBlockPrefix() },
  });
  if (entries.length === 0) return [];
  const items = await batchGet<BlockKey & { pk: string }>(entries.map((e) => keys.publicKey('block', e.blockKey)));
  const byPk = new Map(items.filter((i) => i.clientId === clientId).map((i) => [i.pk, i]));
  const order = (e: { createdAt?: string; blockKey: string }) => `${e.createdAt ?? ''}#${e.blockKey}`;
  return entries
    .sort((a, b) => (order(a) < order(b) ? -1 : 1))
    .flatMap((e) => {
      const item = byPk.get(keys.publicKey('block', e.blockKey).pk);
      return item ? [{ ...item, blockKey: e.blockKey }] : [];
    });
}

/**
 * Writes a block's settings: `set` attributes replaced, `remove` attributes
 * removed, on the key item of a block of this client only (false when the key
 * is unknown or another client's: nothing written).
 */
export async function updateBlock(clientId: string, blockKey: string, set: Record<string, unknown>, remove: string[]): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':client': clientId };
  const sets = Object.entries(set).map(([name, value], i) => {
    names[`#s${i}`] = name;
    values[`:s${i}`] = value;
    return `#s${i} = :s${i}`;
  });
  const removes = remove.map((name, i) => {
    names[`#r${i}`] = name;
    return `#r${i}`;
  });
  names['#client'] = 'clientId';
  const expression = [sets.length > 0 ? `SET ${sets.join(', ')}` : '', removes.length > 0 ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' ');
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.publicKey('block', blockKey),
        // Nothing to change still checks the block is the client's.
        UpdateExpression: expression || 'SET #client = :client',
        ConditionExpression: 'attribute_exists(pk) AND #client = :client',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/**
 * Migration (`admin backfill-blocks`): writes the listing entries of a client's blocks that lack one. One Scan of the
 * whole table (block keys have no index by client); rewriting an entry changes nothing. Returns the block keys found.
 */
export async function backfillBlockListing(clientId: string): Promise<string[]> {
  await requireClient(clientId);
  const found: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'begins_with(pk, :blocks) AND clientId = :client',
        ExpressionAttributeValues: { ':blocks': keys.publicKey('block', '').pk, ':client': clientId },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const blockKey = String(item.pk).slice(keys.publicKey('block', '').pk.length);
      found.push(blockKey);
      await ddb.send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.clientBlock(clientId, blockKey), type: 'clientBlock', blockKey, createdAt: typeof item.createdAt === 'string' ? item.createdAt : '' },
        }),
      );
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found.sort();
}

/** Resolves a public key of the given kind, or undefined when unknown. */
export async function resolvePublicKey<K extends KeyKind>(
  kind: K,
  key: string,
): Promise<Extract<PublicKeyItem, { kind: K }> | undefined> {
  if (!key) return undefined;
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.publicKey(kind, key) }));
  return out.Item as Extract<PublicKeyItem, { kind: K }> | undefined;
}
