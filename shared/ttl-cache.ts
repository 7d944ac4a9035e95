/**
 * A per-container read cache with a time to live: the recommendations' read
 * caches (shared/recos/read-cache.ts) and the reader links' secrets
 * (shared/readers/check.ts).
 */
/** A map whose entries expire after `ttlMs` and which keeps at most `maxEntries` (the oldest written go first). */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: V }>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    return this.entry(key, now)?.value;
  }

  /** The live entry of `key` and how old it is (milliseconds), or undefined. */
  entry(key: string, now = Date.now()): { value: V; ageMs: number } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at >= this.ttlMs || now < entry.at) {
      this.entries.delete(key);
      return undefined;
    }
    return { value: entry.value, ageMs: now - entry.at };
  }

  set(key: string, value: V, now = Date.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { at: now, value });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  clear(): void {
    this.entries.clear();
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
