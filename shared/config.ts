/**
 * Configuration from the environment (names in docs/operations.md; the stack and the local runtime set the same): a
 * missing required variable fails fast with its name, and every read is recorded per function to check the stack.
 */
import { recordEnvRead } from './recording.js';

function required(name: string): string {
  recordEnvRead(name, true);
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

/** A variable with a default: read through here so the local runtime records the read (shared/recording.ts). */
function optional(name: string): string | undefined {
  recordEnvRead(name, false);
  return process.env[name];
}

function optionalInt(name: string, fallback: number): number {
  const raw = optional(name);
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`Environment variable ${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

function optionalBool(name: string, fallback: boolean): boolean {
  const raw = optional(name);
  if (raw === undefined || raw === '') return fallback;
  return raw.toLowerCase() === 'true';
}

/** Configuration getters; read lazily so a function only needs the names it uses. */
/** Token lifetime when TOKEN_TTL_SECONDS is not set: one hour. */
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;

export const config = {
  get tableName(): string {
    return required('TABLE_NAME');
  },
  get importsBucket(): string {
    return required('IMPORTS_BUCKET');
  },
  get eventsBucket(): string {
    return required('EVENTS_BUCKET');
  },
  /** The SQS queue of page views (POST /v1/track sends, the trackingViews job consumes). */
  get trackingQueueUrl(): string {
    return required('TRACKING_QUEUE_URL');
  },
  /** Public base address of the API, used to build links (confirmation, redirects). */
  get publicBaseUrl(): string {
    return required('PUBLIC_BASE_URL').replace(/\/+$/, '');
  },
  /** Token lifetime in seconds (default one hour). */
  get tokenTtlSeconds(): number {
    return optionalInt('TOKEN_TTL_SECONDS', DEFAULT_TOKEN_TTL_SECONDS);
  },
  /** Local data directory (the mail outbox lives in `<DATA_DIR>/outbox`). */
  get dataDir(): string {
    return optional('DATA_DIR') || '.data';
  },
  /** How email leaves: `ses` (SES v2, the default) or `outbox` (`.eml` files in DATA_DIR/outbox, local only). */
  get mailTransport(): 'ses' | 'outbox' {
    const value = optional('MAIL_TRANSPORT') || 'ses';
    if (value !== 'ses' && value !== 'outbox') throw new Error(`Environment variable MAIL_TRANSPORT must be ses or outbox, got "${value}"`);
    return value;
  },
  /** Sender address of opt-in emails (a verified SES identity in AWS). */
  get mailFrom(): string {
    return required('MAIL_FROM');
  },
  /** Days a pending opt-in (and its confirmation links) stays valid. */
  get optinExpiryDays(): number {
    return optionalInt('OPTIN_EXPIRY_DAYS', 30);
  },
  /** Days after the first submission when the one reminder goes out. */
  get optinReminderDays(): number {
    return optionalInt('OPTIN_REMINDER_DAYS', 3);
  },
  /** Minimum minutes between two confirmation emails for the same pending opt-in. */
  get optinResendMinutes(): number {
    return optionalInt('OPTIN_RESEND_MINUTES', 15);
  },
  /** Event files larger than this are served by a redirect to a presigned S3 URL (Lambda responses stop at 6 MB). */
  get eventsInlineMaxBytes(): number {
    return optionalInt('EVENTS_INLINE_MAX_BYTES', 4_000_000);
  },
  /** Lifetime of the presigned URL of a large event file. */
  get eventsUrlTtlSeconds(): number {
    return optionalInt('EVENTS_URL_TTL_SECONDS', 300);
  },
  /** Newsletter picks: lists with at most this many subscribed members (and 15,000 picks) answer directly; larger ones answer 202 with a job (docs/capacity.md). */
  get picksDirectMaxMembers(): number {
    return optionalInt('PICKS_DIRECT_MAX_MEMBERS', 3000);
  },
  /** Newsletter picks: the job stops an invocation this many milliseconds before the function's timeout and continues in the next (tests set it high to make several parts). */
  get picksJobMarginMs(): number {
    return optionalInt('PICKS_JOB_MARGIN_MS', 60_000);
  },
  /**
   * Newsletter picks: a job whose current invocation started longer ago than this (the worker's 15-minute
   * timeout and a minute), or that never started, is reported failed: its worker died (out of memory, a crash)
   * and nothing will run it again.
   */
  get picksStallSeconds(): number {
    return optionalInt('PICKS_STALL_SECONDS', 960);
  },
  /** Newsletter picks: jobs a client may start per hour (each reads a whole list and its readers); more answer 429. */
  get picksJobsPerHour(): number {
    return optionalInt('PICKS_JOBS_PER_HOUR', 10);
  },
  /** Lifetime of the presigned URL of a newsletter-picks result. */
  get picksUrlTtlSeconds(): number {
    return optionalInt('PICKS_URL_TTL_SECONDS', 3600);
  },
  /** Path-style S3 addressing, needed by the local S3 emulator. */
  get s3ForcePathStyle(): boolean {
    return optionalBool('S3_FORCE_PATH_STYLE', false);
  },
  /** Lets imports fetch loopback URLs (local development and tests only). */
  get importAllowLoopback(): boolean {
    return optionalBool('IMPORT_ALLOW_LOOPBACK', false);
  },
  /** Lets the catalogue feed job fetch loopback URLs (`npm start`'s demo feed; tests). Feeds are set by support staff only. */
  get feedAllowLoopback(): boolean {
    return optionalBool('FEED_ALLOW_LOOPBACK', false);
  },
  /** Largest imported file, in bytes (default 100 MiB). */
  get importMaxBytes(): number {
    return optionalInt('IMPORT_MAX_BYTES', 100 * 1024 * 1024);
  },
  /** Time allowed to download an imported file, from the request to the last byte (default 20 s). */
  get importFetchTimeoutMs(): number {
    return optionalInt('IMPORT_FETCH_TIMEOUT_MS', 20_000);
  },
  /** Time allowed to connect and get the response headers of one request (default 5 s). */
  get importConnectTimeoutMs(): number {
    return optionalInt('IMPORT_CONNECT_TIMEOUT_MS', 5_000);
  },
  /** Redirects followed when fetching an imported file (default 3). */
  get importMaxRedirects(): number {
    return optionalInt('IMPORT_MAX_REDIRECTS', 3);
  },
  /** How long an import worker's claim on a file lasts without a checkpoint (default 60 s). */
  get importLeaseSeconds(): number {
    return optionalInt('IMPORT_LEASE_SECONDS', 60);
  },
};
