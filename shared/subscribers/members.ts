/**
 * What a bulk writer knows of a list's members without reading them: when
 * the list was empty as this process took its lease, and nobody else has
 * written it since, its members are exactly the addresses this process
 * wrote. A Bloom filter of those addresses (2 MiB, whatever the list's size)
 * answers "certainly absent" for a new address, so its line needs no read;
 * "maybe present" lines are read as usual. Whether anybody else wrote is
 * told by the list writer lease (shared/subscribers/list-writer.ts): every
 * transactional write adds 1 to a lease shard's `w` and every lease taken
 * adds 1 to each shard's `g`; the knowledge holds while both sums are what
 * this process left them at.
 */

const BITS = 2 ** 24; // 2 MiB: about 0.05% false positives at 1,000,000 addresses, 2% at 3,000,000
const HASHES = 7;
/** Lists a process keeps knowledge of (each costs 2 MiB). */
const MAX_KNOWN = 4;

/** FNV-1a over the string's UTF-16 code units, 32 bits, from a seed. */
function fnv(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A Bloom filter of addresses: `has` may say true for an address never added, never false for one added. */
export class AddressFilter {
  private readonly bits = new Uint8Array(BITS / 8);

  private positions(email: string): number[] {
    const h1 = fnv(email, 0x811c9dc5);
    const h2 = fnv(email, 0x9747b28c) | 1;
    return Array.from({ length: HASHES }, (_, i) => (h1 + Math.imul(i, h2)) >>> 0 & (BITS - 1));
  }

  add(email: string): void {
    for (const p of this.positions(email)) this.bits[p >> 3] |= 1 << (p & 7);
  }

  has(email: string): boolean {
    return this.positions(email).every((p) => (this.bits[p >> 3] & (1 << (p & 7))) !== 0);
  }
}

/** The knowledge a process keeps between its holds of one list's lease. */
export interface Knowledge {
  filter: AddressFilter;
  /** Sum of the lease shards' `w` (transactional writes) when this process last released. */
  writes: number;
  /** Shard 0's `g` (leases taken) while this process held it last. */
  generation: number;
}

/** What a process knows of the lists it wrote, by list (held by the list writer's per-container object). */
export type KnownLists = Map<string, Knowledge>;
const listKey = (clientId: string, listId: number) => `${clientId}#${listId}`;

/**
 * The filter to use under a lease just taken, given the shards' sums read
 * after taking it and, when there is no valid knowledge, whether the list
 * has no member (its counters, exact once the journal is settled).
 */
export async function filterForHold(
  known: KnownLists,
  clientId: string,
  listId: number,
  seen: { writes: number; generation: number },
  isEmpty: () => Promise<boolean>,
): Promise<AddressFilter | undefined> {
  const key = listKey(clientId, listId);
  const prior = known.get(key);
  known.delete(key);
  if (prior && prior.writes === seen.writes && prior.generation + 1 === seen.generation) return prior.filter;
  return (await isEmpty()) ? new AddressFilter() : undefined;
}

/** Keeps the filter for this process's next hold of the list (after a clean release). */
export function keepKnowledge(known: KnownLists, clientId: string, listId: number, knowledge: Knowledge): void {
  known.set(listKey(clientId, listId), knowledge);
  if (known.size > MAX_KNOWN) known.delete(known.keys().next().value!);
}
