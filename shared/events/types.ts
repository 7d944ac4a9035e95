/** The newsletter events and their CSV columns, exactly as spec §6 lists them. */
export const eventColumns = {
  nl_click: ['date', 'email', 'campaign_id', 'newsletter_id', 'email_list_id', 'target_id', 'target_url', 'target_position'],
  nl_display: ['date', 'email', 'campaign_id', 'newsletter_id', 'email_list_id'],
  nl_send: ['date', 'email', 'campaign_id', 'newsletter_id', 'email_list_id'],
  nl_subscribe: ['date', 'email', 'email_list_id'],
  nl_unsubscribe: ['date', 'email', 'cause', 'email_list_id'],
  nl_bounce: ['date', 'email', 'campaign_id', 'newsletter_id', 'email_list_id', 'type', 'message'],
  nl_complaint: ['date', 'email', 'campaign_id', 'newsletter_id', 'email_list_id', 'type'],
} as const;

export type EventName = keyof typeof eventColumns;
export const eventNames = Object.keys(eventColumns) as EventName[];

/**
 * Raw records that are not spec §6 events: stored under `raw/` like them, so the change feed
 * (shared/webhooks/changes.ts) reads them, but no CSV file, download or Athena table shows them (the
 * assemblers and the Glue projection walk `eventNames` only). `nl_delete`: a subscription removed by
 * `POST /v1/users/delete` (the change `subscriber.deleted`).
 */
export const rawOnlyEventNames = ['nl_delete'] as const;
/** The event of a raw record: a spec §6 event or a raw-only one. */
export type RawEventName = EventName | (typeof rawOnlyEventNames)[number];

/**
 * The hidden field of a raw line that identifies the event across
 * redeliveries of its source: the assembler keeps one line per id; the CSV
 * does not show it.
 */
export const EVENT_ID_FIELD = '_id';

/** One event: `date` is an ISO 8601 UTC timestamp; the other fields are the event's columns (and optionally its hidden id). */
export type EventRecord = {
  event: RawEventName;
  date: string;
  email: string;
  [EVENT_ID_FIELD]?: string;
  /** The subscriber's guid (subscription events): for the change feed and SQL, not a CSV column. */
  guid?: string;
} & Partial<Record<(typeof eventColumns)[EventName][number], string | number>>;
