/**
 * The recommendation domain's records. Times are Unix seconds throughout
 * (`published_time` in responses too).
 */

/** An article of a client's catalogue, built from page views. */
export interface Article {
  /** Stable id: a hash of the canonical URL (see `articleGuid`). */
  guid: string;
  /** Canonical URL (see `canonicalUrl`). */
  url: string;
  title: string;
  desc: string;
  image: string;
  category: string;
  /** Lower-cased themes from the `service:themes` meta (spec 4.13). */
  themes: string[];
  /** Publication time (Unix seconds); the first page view when the page did not say. */
  published: number;
  /**
   * false when no page nor the catalogue ever gave the publication time
   * (`published` is then the first view: an article of the back catalogue,
   * first seen at install, is not fresh); absent on articles stored before
   * the flag, which count as dated.
   */
  dated?: boolean;
  firstSeen: number;
  lastSeen: number;
  views: number;
  clicks: number;
  /** log2 of Σ 2^((t_view − EPOCH)/HALF_LIFE): decayed popularity whose order never changes with time. */
  hot: number;
}

/** One read of a reader: article guid and time. */
export interface Read {
  g: string;
  t: number;
}

/** A reader's recent reads (most recent first, capped) and implicit theme tastes. */
export interface Reader {
  userId: string;
  reads: Read[];
  /** Theme → decayed count of reads carrying it (capped). */
  tastes: Record<string, number>;
  lastSeen: number;
}

/** A reader's explicit preferences (spec 4.13), set through the preferences endpoint. */
export interface Preferences {
  userId: string;
  themes: string[];
  updatedAt: string;
}

/** A catalogue article on the client's fresh list: its guid and publication time (Unix seconds). */
export interface FreshEntry {
  guid: string;
  published: number;
}

/** "Readers of this page also read": co-read article guid → count, capped. */
export type Covisits = Record<string, number>;

/** Ranking weights of the blend (block setting `weights`). */
export interface Weights {
  covisit: number;
  content: number;
  preferences: number;
  popularity: number;
  /** Recently published articles, decaying to 0 at the block's freshness window (works before the first view). */
  freshness: number;
}

export type Envelope = 'smart-section' | 'legacy';

/** A block's settings with defaults applied (they live on the block key item, `createBlock`). */
export interface BlockSettings {
  clientId: string;
  /** Suggestions per request when `rows` is absent. */
  rows: number;
  /** Length of the ranking: `start + rows` never reaches past it (spec §8: "set per client"). */
  maxRows: number;
  /** Articles published longer ago than this are never recommended. */
  maxAgeDays: number;
  /** The freshness signal favours articles published less than this many hours ago (linear decay to 0 at the window). */
  freshnessHours: number;
  envelope: Envelope;
  weights: Weights;
  /** The client's site hosts (shared/clients/site-hosts.ts): only articles on them are recommended or redirected to; empty: none. */
  siteHosts: string[];
  /** When set, narrows the site hosts: only articles on these hosts (or their subdomains) are recommended or redirected to. */
  hosts?: string[];
  /** Display names of categories (`category_display`); the category itself when absent. */
  categoryDisplay: Record<string, string>;
  /** Editorial pins (block setting `pins`): each article shows at its position for every reader until `until`. */
  pins: Pin[];
  /** Never recommended by this block (block setting `exclude`): canonical URLs' guids and categories. */
  exclude: { guids: string[]; categories: string[] };
  /** A/B test of the block (block setting `variants`); empty: no test, every answer is variant `default`. */
  variants: Variant[];
}

/** An editorial pin of a block: `url` (canonical) shows at `position` (1 = first) until `until` (Unix seconds; absent: no end). */
export interface Pin {
  url: string;
  guid: string;
  position: number;
  until?: number;
}

/**
 * A variant of a block's A/B test: `share` percent of readers (a stable hash
 * of block and reader id); `weights` override the block's blend weights;
 * `holdout` answers the block's control instead of recommendations.
 */
export interface Variant {
  name: string;
  share: number;
  weights?: Partial<Weights>;
  holdout?: boolean;
}

/**
 * Why an item is recommended (the smart-section envelope's `reason`): the
 * read or current page whose co-reads contributed most, a preferred theme,
 * popularity, freshness, or an editorial pin.
 */
export type Reason =
  | { type: 'covisit'; from: { guid: string; title: string } }
  | { type: 'preferences'; theme: string }
  | { type: 'popular' }
  | { type: 'fresh' }
  | { type: 'pinned' };

/** A page view as the tracking endpoint accepts it, already validated and normalised. */
export interface PageView {
  userId: string;
  /** Canonical URL (`canonicalUrl`). */
  url: string;
  title?: string;
  desc?: string;
  image?: string;
  category?: string;
  /** Unix seconds. */
  published?: number;
  themes?: string[];
}

/** What a page or the catalogue says about an article (no reader). */
export type ArticleMeta = Omit<PageView, 'userId'>;

/** The views of one article in a batch, as one update: the latest metadata and every view time. */
export interface ArticleViews {
  guid: string;
  /** Metadata the pages sent, later views overriding earlier ones field by field (absent or empty fields keep earlier ones). */
  meta: ArticleMeta;
  /** View times (Unix seconds), oldest first: their count and popularity mass are added. */
  times: number[];
}
