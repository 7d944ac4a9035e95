/**
 * The recommendation records' bounds: per reader and per article (LIMITS),
 * co-visit items and the fresh list (the caps and their pruning rules).
 */
import { freshListable } from './settings.js';
import type { Covisits, FreshEntry } from './types.js';

/** Storage bounds per reader and per article (docs/architecture.md "Recommendations: storage"). */
export const LIMITS = {
  /** Most recent distinct reads kept per reader. */
  readsPerReader: 100,
  /** Implicit themes kept per reader (strongest first). */
  tastesPerReader: 30,
  /** Themes kept per article. */
  themesPerArticle: 20,
  /** Explicit preferences per reader. */
  preferencesPerReader: 50,
  /** Two page views of a reader belong to one session when at most this far apart. */
  sessionGapSeconds: 30 * 60,
  /** A new read is co-counted with at most this many earlier reads of the same session. */
  sessionPairs: 4,
  /** A reader's item expires this long after their last page view. */
  readerTtlDays: 180,
  /** An article (and its co-visits) expires this long after its last page view. */
  articleTtlDays: 365,
  /** Implicit tastes decay by this factor at each new read. */
  tasteDecay: 0.9,
};

/** Co-visit items keep the strongest COVISIT_CAP neighbours once they grow past COVISIT_PRUNE_AT. */
export const COVISIT_CAP = 100;
export const COVISIT_PRUNE_AT = 150;

/** Entries kept on a client's fresh list. */
export const FRESH_LIST_CAP = 500;

/** The fresh list after adding entries: newest first by publication, only listable ones (freshListable: within MAX_FRESHNESS_HOURS, not far ahead), at most FRESH_LIST_CAP. */
export function pruneFresh(entries: FreshEntry[], now: number, aheadOf = now): FreshEntry[] {
  const byGuid = new Map(entries.map((e) => [e.guid, e]));
  return [...byGuid.values()]
    .filter((e) => freshListable(e.published, now, aheadOf))
    .sort((a, b) => b.published - a.published || (a.guid < b.guid ? -1 : 1))
    .slice(0, FRESH_LIST_CAP);
}

/** Keeps the `cap` largest counts (ties by guid). */
export function pruneCovisits(counts: Covisits, cap = COVISIT_CAP): Covisits {
  return Object.fromEntries(
    Object.entries(counts)
      .sort(([ga, a], [gb, b]) => b - a || (ga < gb ? -1 : 1))
      .slice(0, cap),
  );
}

