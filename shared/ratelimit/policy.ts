/** The rate limits themselves: plain values, read by the limiter (limits.ts) and by the route descriptions. */

/** Spec §8 defaults of POST /v1/subscribe. */
export const DEFAULT_SUBSCRIBE_LIMITS = { perIpPerMinute: 5, perKeyPerMinute: 10 };

/**
 * Failed logins (GET /v1/token) allowed per window before 429: per client
 * name from one source address, and per source address whatever the names.
 * Keyed by the source, so a stranger elsewhere cannot lock a client out.
 */
export const LOGIN_LIMITS = { perNameAndIp: 5, perIp: 20, windowMinutes: 15 };

/**
 * Reader pages (unsubscribe and preference links, GET and POST), per
 * publisher: per source address (IPv6 by /64), then overall once the link
 * checked. A mailbox provider posts one-click unsubscribes from a few
 * addresses, hence more than the form's 5 per IP.
 */
export const READER_PAGE_LIMITS = { perIpPerMinute: 60, perClientPerMinute: 1200 };
