/** Why a subscriber is unsubscribed (spec §3, 2.5). */
export type UnsubscribeCause = 'READER' | 'PUBLISHER' | 'HARD_BOUNCE';
export const unsubscribeCauses: UnsubscribeCause[] = ['HARD_BOUNCE', 'PUBLISHER', 'READER'];

/**
 * One validated subscriber line (spec 2.4/2.8), as the API, CSV import,
 * opt-in confirmation and bounce ingestion hand it to the service.
 */
export interface SubscriberLine {
  /** 1-based position in the request or file, for the report. */
  line: number;
  /** Trimmed and lower-cased. */
  email: string;
  /** true subscribes, false unsubscribes; undefined: a new address is subscribed, an existing one keeps its status. */
  subscribed?: boolean;
  guid?: string;
  /** Used when subscribed is false; default READER. */
  unsubscribedCause?: UnsubscribeCause;
  /** `data_*` fields, merged into the subscriber's data. */
  data?: Record<string, unknown>;
  /** undefined leaves consent unchanged. */
  openTrackingConsent?: boolean;
  /**
   * Idempotency id (e.g. `import#<fileId>#<line>`): a line whose opId the
   * subscriber already carries is not applied again, and its first outcome
   * is reported again.
   */
  opId?: string;
  /**
   * The imported file the line comes from: stored as the subscriber's
   * `lastImportFile` (only imports write it), so update_list can tell the
   * members a file contains from those it does not.
   */
  importFileId?: string;
  /** Where the line comes from, for its consent record; absent: `import` (with importFileId) or `api`. */
  consent?: ConsentSource;
  /** Applies only to an address already in the list: an unknown address stays unknown (a reader's link never adds one). */
  onlyExisting?: boolean;
}

/** Where a change of status came from (docs/api.md, "Consent records"). */
export interface ConsentSource {
  source: 'api' | 'import' | 'optin' | 'unsubscribe_link' | 'preferences' | 'bounce' | 'complaint';
  /** import: the imported file's id. */
  file_id?: string;
  /** optin: the form, when the reader submitted it and when they confirmed. */
  form_key?: string;
  requested_at?: string;
  confirmed_at?: string;
  /** Requests from a browser or a mail client: source address and user agent (at most 256 characters). */
  ip?: string;
  user_agent?: string;
}

/** One change of a subscriber's status in a list, kept on the subscriber (at most MAX_CONSENT_RECORDS). */
export interface ConsentRecord extends ConsentSource {
  at: string;
  subscribed: boolean;
  cause?: UnsubscribeCause;
}

/** An entry of `report.errors`. */
export interface ReportError {
  line: number;
  /** The email as given (null when absent or not a string). */
  email: string | null;
  cause: string;
}

/** The subscription report (spec 2.6); docs/api.md defines each counter. */
export interface Report {
  errors: ReportError[];
  unique_emails_count: number;
  duplicate_emails_count: number;
  duplicate_guid_count: number;
  nb_created: number;
  nb_subscribed: number;
  nb_unsubscribed: number;
  nb_data_changed: number;
}
