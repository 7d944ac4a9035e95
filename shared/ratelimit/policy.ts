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
 * Reader pages (GET of the unsubscribe and preference links), per
 * publisher: per source address (IPv6 by /64) before the link is checked,
 * then per link once it checked. Mail scanners and link previewers fetch
 * every link of a sent newsletter a few times each: well within a link's
 * own budget. A link replayed from many addresses limits that link only.
 */
export const READER_PAGE_LIMITS = { perIpPerMinute: 60, perLinkPerMinute: 20 };

/**
 * Reader changes (POST: one-click unsubscribes, saved preferences), counted
 * apart from the pages, so that scanners using up a page budget never turn a
 * reader's unsubscribe into a 429. A mailbox provider posts its users'
 * one-click unsubscribes from a few addresses of its own (RFC 8058), hence
 * 600 per address, not the form's 5; one reader's link posts a few times at most.
 */
export const READER_CHANGE_LIMITS = { perIpPerMinute: 600, perLinkPerMinute: 10 };
