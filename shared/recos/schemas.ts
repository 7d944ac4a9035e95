import * as v from 'valibot';
import { isWellFormed } from '../db/storable.js';
import { BoolParam, IntParam } from '../params.js';
import { MAX_DATE_CHARS, MAX_PUBLISHED_MILLISECONDS, MAX_PUBLISHED_SECONDS, MIN_PUBLISHED_SECONDS, PUBLISHED_RANGE_ISO, rangeProblem, readDate } from './dates.js';
import { LIMITS } from './limits.js';
import { plainText } from './plain-text.js';
import { canonicalUrl } from './urls.js';

export { MAX_PUBLISHED_SECONDS, toUnixSeconds } from './dates.js';

/** The catalogue's limits on an article's text, in characters (UTF-16 units): `PUT /v1/articles`, tracking, feeds. */
export const ARTICLE_TEXT_LIMITS = { title: 500, description: 2000, category: 200, theme: 64, url: 2048 } as const;

/** A reader's id: the tracking user id, the anonymous cookie value or a subscriber's guid (one id space, spec 2.3). */
export const UserIdSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(128, 'must be at most 128 characters'),
  // eslint-disable-next-line no-control-regex -- refusing control characters is this pattern's purpose
  v.regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters'),
  v.check(isWellFormed, 'must not contain unpaired surrogates (invalid Unicode)'),
);

const PublicKeySchema = v.pipe(v.string(), v.minLength(1), v.maxLength(128));

/** `sig`: the reader id's signature (lowercase hex HMAC-SHA256), where the client requires signed ids. */
export const SigSchema = v.optional(v.pipe(v.string(), v.maxLength(128, 'must be at most 128 characters'), v.description('Lowercase hex HMAC-SHA256 of the user id under the client\'s signing secret; required when the client has signed reader ids on (403 otherwise)')));

const ArticleUrlSchema = v.pipe(
  v.string(),
  v.maxLength(ARTICLE_TEXT_LIMITS.url, `must be at most ${ARTICLE_TEXT_LIMITS.url} characters`),
  v.check((url) => canonicalUrl(url) !== undefined, 'must be an absolute http(s) URL'),
  v.transform((url) => canonicalUrl(url)!),
);

/** Stored text: at most `max` characters as sent, kept as plain text (plain-text.ts: control characters and markup removed, trimmed). */
const text = (max: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.maxLength(max, `must be at most ${max} characters`),
      v.description('Stored as plain text: markup (anything from a `<` that opens a tag to the next `>`) and control characters are removed, then spaces trimmed'),
      v.transform(plainText),
    ),
  );

/** Themes: comma-separated values split, plain text, lower-cased, empty ones and duplicates dropped. */
const normaliseThemes = (raw: string[]) => [...new Set(raw.flatMap((t) => t.split(',')).map((t) => plainText(t).toLowerCase()).filter((t) => t !== ''))];

const ThemesSchema = (max: number) =>
  v.pipe(
    v.union([v.array(v.string()), v.string()], 'must be an array of strings or a comma-separated string'),
    v.transform((value) => normaliseThemes(Array.isArray(value) ? value : [value])),
    v.check((themes) => themes.every((t) => t.length <= ARTICLE_TEXT_LIMITS.theme), `each theme must be at most ${ARTICLE_TEXT_LIMITS.theme} characters`),
    v.check((themes) => themes.every(isWellFormed), 'themes must not contain unpaired surrogates (invalid Unicode)'),
    v.check((themes) => themes.length <= max, `at most ${max} themes`),
  );

/** What `published_time` accepts, for its causes (built from the constants of dates.ts). */
const PUBLISHED_TIME_RULE = `must be Unix seconds or an ISO 8601 date from 1970 to 9999-12-31 (seconds ${MIN_PUBLISHED_SECONDS} to ${MAX_PUBLISHED_SECONDS}; milliseconds ${MAX_PUBLISHED_SECONDS + 1} to ${MAX_PUBLISHED_MILLISECONDS})`;

/** `published_time`: Unix seconds, milliseconds or ISO 8601 (dates.ts), within the range; a 400 (a rejected line in a catalogue batch) that says what is wrong otherwise. Empty text: absent. */
const PublishedTimeSchema = v.optional(
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.maxLength(MAX_DATE_CHARS, `${PUBLISHED_TIME_RULE}: is longer than ${MAX_DATE_CHARS} characters`))], PUBLISHED_TIME_RULE),
    v.description(`Unix seconds, milliseconds (a number above ${MAX_PUBLISHED_SECONDS}) or ISO 8601 (no offset: UTC), from ${PUBLISHED_RANGE_ISO.min} to ${PUBLISHED_RANGE_ISO.max}`),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = dataset.value;
      if (typeof value === 'string' && value.trim() === '') return undefined;
      const reading = readDate(value);
      const problem = 'seconds' in reading ? rangeProblem(reading.seconds) : reading.problem;
      if (problem === undefined && 'seconds' in reading) return reading.seconds;
      addIssue({ message: `${PUBLISHED_TIME_RULE}: ${JSON.stringify(value)} ${problem}` });
      return NEVER;
    }),
  ),
);

export const TrackParamsSchema = v.object({ tracking_key: PublicKeySchema });

/** An article's fields, as tracking and the catalogue accept them (url canonicalised). */
const articleFields = {
  url: ArticleUrlSchema,
  title: text(ARTICLE_TEXT_LIMITS.title),
  description: text(ARTICLE_TEXT_LIMITS.description),
  image: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(ARTICLE_TEXT_LIMITS.url, `must be at most ${ARTICLE_TEXT_LIMITS.url} characters`),
      v.check((s) => s.trim() === '' || canonicalUrl(s) !== undefined, 'must be an absolute http(s) URL'),
      // Stored as the URL's standard serialisation: spaces, quotes and angle brackets percent-encoded.
      v.transform((s) => (s.trim() === '' ? '' : new URL(s.trim()).href)),
    ),
  ),
  category: text(ARTICLE_TEXT_LIMITS.category),
  published_time: PublishedTimeSchema,
  themes: v.optional(ThemesSchema(LIMITS.themesPerArticle)),
};

/** The tracking body (JSON, or a form body from the browser library's beacon). */
export const TrackBodySchema = v.object({
  user_id: UserIdSchema,
  sig: SigSchema,
  ...articleFields,
});
export type TrackBodyOutput = v.InferOutput<typeof TrackBodySchema>;

export const TrackResultSchema = v.object({ status: v.literal('OK'), guid: v.string() });

/** A JSONP callback: an identifier or a dotted path of identifiers. */
export const CALLBACK_PATTERN = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

export const RecommendationsParamsSchema = v.object({ block_key: PublicKeySchema, user_id: UserIdSchema });

export const RecommendationsQuerySchema = v.object({
  rows: IntParam(1, 100),
  start: IntParam(0, 100_000),
  // Read from the raw query string (repeated values); the schema gives its type to the API description.
  'excluded[]': v.optional(
    v.pipe(
      v.string(),
      v.transform((url) => [url]),
      v.array(v.string()),
      v.maxLength(100),
      v.description('URLs (or article guids, as answered in `guid`) left out of the result: repeat the parameter (`excluded[]=…&excluded[]=…`), at most 100'),
    ),
  ),
  shuffle: BoolParam,
  redir_https: BoolParam,
  noredir: BoolParam,
  callback: v.optional(
    v.pipe(v.string(), v.maxLength(128, 'must be at most 128 characters'), v.regex(CALLBACK_PATTERN, 'must be an identifier or a dotted path of identifiers')),
  ),
  page_url: v.optional(
    v.pipe(
      v.string(),
      v.description('URL of the page being read; takes precedence over the referer header (browsers send only the origin cross-site)'),
      v.maxLength(2048, 'must be at most 2048 characters'),
      v.check((url) => canonicalUrl(url) !== undefined, 'must be an absolute http(s) URL'),
      v.metadata({
        openapi: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@]', minLength: 8, maxLength: 2048, description: 'URL of the page being read (absolute http(s), no user or password); takes precedence over the referer header (browsers send only the origin cross-site)' },
      }),
    ),
  ),
  format: v.optional(v.picklist(['smart-section', 'legacy'], 'must be smart-section or legacy')),
  sig: SigSchema,
});

/** Why an item is recommended (smart-section envelope only; absent when no signal says). */
export const ReasonSchema = v.pipe(
  v.variant('type', [
    v.object({ type: v.literal('covisit'), from: v.object({ guid: v.string(), title: v.string() }) }),
    v.object({ type: v.literal('preferences'), theme: v.string() }),
    v.object({ type: v.literal('popular') }),
    v.object({ type: v.literal('fresh') }),
    v.object({ type: v.literal('pinned') }),
  ]),
  v.description('The dominant signal of the item: `covisit` (readers of `from`, the current page or one the reader read just before, also read it), `preferences` (a theme the reader prefers or reads), `popular`, `fresh` (just published) or `pinned` (an editorial pin of the block)'),
);

export const RecommendationSchema = v.object({
  guid: v.string(),
  url: v.string(),
  url_raw: v.optional(v.string()),
  title: v.string(),
  desc: v.string(),
  image: v.string(),
  category: v.string(),
  category_display: v.optional(v.string()),
  published_time: v.optional(v.pipe(v.number(), v.integer(), v.description('Unix seconds'))),
  reason: v.optional(ReasonSchema),
});
export type RecommendationOutput = v.InferOutput<typeof RecommendationSchema>;

/** The top-level fields that identify an answer (both envelopes). */
const answerFields = {
  recomm_id: v.pipe(
    v.string(),
    v.description('Id of this answer: `<variant>.<16 base64url characters>`; each redirect URL carries it signed for its article as `rid=<recomm_id>.<tag>`, so its click counts for the variant, once'),
  ),
  variant: v.pipe(v.string(), v.description("The block's A/B variant that answered this reader (`default` when the block has no test or the reader is in no variant's share)")),
};

export const SmartSectionSchema = v.object({
  result: v.object({ recommendation: v.array(RecommendationSchema) }),
  algo: v.pipe(v.string(), v.description('The signals that placed the items; `holdout:most-read` for a holdout variant')),
  status: v.literal('OK'),
  ...answerFields,
});

export const LegacyRecommendationsSchema = v.object({
  count: v.number(),
  start: v.number(),
  recommendations: v.array(RecommendationSchema),
  ...answerFields,
});

export const RedirectParamsSchema = v.object({ block_key: PublicKeySchema, guid: v.pipe(v.string(), v.regex(/^[0-9a-f]{20}$/, 'must be an article guid')) });
export const RedirectQuerySchema = v.object({
  https: BoolParam,
  rid: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(80, 'must be at most 80 characters'),
      v.description(
        "The answer's `recomm_id` and its tag for this block and article (`<recomm_id>.<16 base64url>`, signed by the service): the first click of each (answer, article) counts for its variant when that is one of the block's variants, `default` or `newsletter`; anything else (unsigned, forged, another article's, a repeat) counts nothing, and the redirect is the same",
      ),
    ),
  ),
});

export const PreferencesParamsSchema = v.object({ user_id: UserIdSchema });
export const PreferencesQuerySchema = v.object({ sig: SigSchema });
export const PreferencesBodySchema = v.object({ themes: ThemesSchema(LIMITS.preferencesPerReader) });
export const PreferencesSchema = v.object({ user_id: v.string(), themes: v.array(v.string()), updated_at: v.nullable(v.string()) });

/** Most articles in one catalogue request. */
export const MAX_ARTICLES_PER_REQUEST = 1000;

/** One article of the catalogue (`PUT /v1/articles`): `url` required, the rest optional (absent fields keep their stored value). */
export const ArticleInputSchema = v.object(articleFields, 'an article must be a JSON object');
export type ArticleInput = v.InferOutput<typeof ArticleInputSchema>;

/** Body of `PUT /v1/articles`: 1 to 1,000 articles; lines are checked one by one (a bad line is rejected in the report). */
export const ArticlesBodySchema = v.pipe(
  v.array(v.unknown(), 'must be a JSON array of articles'),
  v.minLength(1, 'the array is empty'),
  v.maxLength(MAX_ARTICLES_PER_REQUEST, `at most ${MAX_ARTICLES_PER_REQUEST} articles per request`),
);
/** The same body as the API description shows it. */
export const ArticlesBodyDoc = v.pipe(v.array(ArticleInputSchema), v.minLength(1), v.maxLength(MAX_ARTICLES_PER_REQUEST));

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const ArticlesReportSchema = v.object({
  created: Count,
  updated: Count,
  rejected: Count,
  lines: v.array(
    v.object({
      line: v.pipe(Count, v.description('1-based position in the request')),
      status: v.picklist(['created', 'updated', 'rejected']),
      url: v.optional(v.string()),
      guid: v.optional(v.string()),
      cause: v.optional(v.string()),
    }),
  ),
});

/** An article as the catalogue listing shows it. */
export const ArticleOutputSchema = v.object({
  guid: v.string(),
  url: v.string(),
  title: v.string(),
  description: v.string(),
  image: v.string(),
  category: v.string(),
  themes: v.array(v.string()),
  published_time: v.pipe(v.number(), v.integer(), v.description('Unix seconds')),
  views: Count,
  clicks: Count,
});

/** Catalogue page size: default and maximum. */
export const ARTICLES_PAGE = { default: 100, max: 1000 };

export const ArticlesQuerySchema = v.object({
  category: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'), v.description('Only articles of this category (exact match)'))),
  count: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,6}$/, 'must be a positive integer'),
      v.transform(Number),
      v.number(),
      v.integer(),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(ARTICLES_PAGE.max, `must be at most ${ARTICLES_PAGE.max}`),
      v.description(`Articles per page (default ${ARTICLES_PAGE.default})`),
    ),
  ),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048, 'cursor is invalid'), v.description('The `X-Next-Cursor` of the previous page'))),
});

export const ArticleDeleteQuerySchema = v.object({ url: ArticleUrlSchema });
export const ArticleDeletedSchema = v.object({ status: v.literal('OK'), url: v.string(), guid: v.string() });
