/**
 * A per-container read cache with a time to live. Copies of settings age on the monotonic clock (a stepping or
 * simulated wall clock must not expire them); copies of content age on the wall clock that dates the content.
 */
/** Milliseconds on the monotonic clock. */
export const monotonicMs = (): number => performance.now();

/**
 * A map whose entries expire after `ttlMs` and which keeps at most
 * `maxEntries` (the oldest written go first). Ages are read on `clock`: the
 * wall clock unless said, or {@link monotonicMs} (see above).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: V }>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  get(key: string, now = this.clock()): V | undefined {
    return this.entry(key, now)?.value;
  }

  /** The live entry of `key` and how old it is (milliseconds), or undefined. */
  entry(key: string, now = this.clock()): { value: V; ageMs: number } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at >= this.ttlMs || now < entry.at) {
      this.entries.delete(key);
      return undefined;
    }
    return { value: entry.value, ageMs: now - entry.at };
  }

  set(key: string, value: V, now = this.clock()): void {
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
