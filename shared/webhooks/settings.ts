/**
 * The webhook functions' settings from the environment (docs/operations.md), apart from shared/config.ts so only
 * those functions bundle them. Reads go through `required`/`optional` and are recorded per function, so the
 * local-equals-deployed check finds a required variable the stack does not set.
 */
import { recordEnvRead } from '../recording.js';

function required(name: string): string {
  recordEnvRead(name, true);
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Missing required environment variable ${name}`);
  return value;
}

/** A variable with a default (or none): the read is recorded, not required. */
function optional(name: string): string | undefined {
  recordEnvRead(name, false);
  return process.env[name];
}

function optionalInt(name: string, fallback: number): number {
  const raw = optional(name);
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`Environment variable ${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/**
 * Standard Webhooks' schedule after the first attempt: 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 10 h (about 27.5 hours in all), then the dead-letter queue.
 */
export const DEFAULT_RETRY_DELAYS = [5, 300, 1800, 7200, 18000, 36000, 36000];

export const webhookSettings = {
  /** Lets webhooks go to loopback addresses and plain http (local development and tests only). */
  get allowLoopback(): boolean {
    return (optional('WEBHOOK_ALLOW_LOOPBACK') ?? '').toLowerCase() === 'true';
  },
  /** The queue of deliveries (the fan-out sends, the delivery job consumes and re-sends retries). */
  get queueUrl(): string {
    return required('WEBHOOK_QUEUE_URL');
  },
  /** Where deliveries go after the last retry (alarmed). */
  get deadLetterQueueUrl(): string {
    return required('WEBHOOK_DEAD_LETTER_QUEUE_URL');
  },
  /** The EventBridge bus every change goes to; unset: none. */
  get eventBusName(): string | undefined {
    return optional('EVENT_BUS_NAME') || undefined;
  },
  /** Seconds before each retry (comma-separated), default DEFAULT_RETRY_DELAYS. */
  get retryDelays(): number[] {
    const raw = optional('WEBHOOK_RETRY_DELAYS');
    if (!raw) return DEFAULT_RETRY_DELAYS;
    const parts = raw.split(',').map((s) => s.trim());
    // Digits only: Number('') is 0, so an empty entry ("5,,6", "5,") would otherwise be a retry without delay.
    const delays = parts.map((s) => (/^\d+$/.test(s) ? Number(s) : NaN));
    if (delays.some((d) => !Number.isSafeInteger(d))) throw new Error(`Environment variable WEBHOOK_RETRY_DELAYS must be comma-separated seconds, got "${raw}"`);
    return delays;
  },
  /** Time allowed to connect and answer one delivery (default 10 s). */
  get timeoutMs(): number {
    return optionalInt('WEBHOOK_TIMEOUT_MS', 10_000);
  },
  /**
   * How long one delivery invocation starts new POSTs (default 5 s): what is left goes back to the queue, so a
   * slow receiver holds a slot for this and one WEBHOOK_TIMEOUT_MS at most.
   */
  get sliceMs(): number {
    return optionalInt('WEBHOOK_SLICE_MS', 5_000);
  },
  /** Webhooks per client (default 10). */
  get maxPerClient(): number {
    return optionalInt('WEBHOOK_MAX_PER_CLIENT', 10);
  },
};
