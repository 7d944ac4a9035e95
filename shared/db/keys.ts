/**
 * Builds every key of the single table. No other module spells a key string.
 */
export type KeyKind = 'tracking' | 'form' | 'block';

const pad = (n: number, width = 10) => String(n).padStart(width, '0');

export const keys = {
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
  /** A subscriber of a list, by normalised (lower-cased) email. */
  subscriber: (clientId: string, listId: number, email: string) => ({
    pk: `SUBS#${clientId}#${listId}`,
    sk: `SUB#${email}`,
  }),
  subscriberPrefix: () => 'SUB#',
  subscribersPartition: (clientId: string, listId: number) => `SUBS#${clientId}#${listId}`,
};

/** Parses the list id back out of a list item's sort key. */
export function listIdFromSortKey(sk: string): number {
  return Number(sk.slice('LIST#'.length));
}
