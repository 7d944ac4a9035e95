/** Errors of webhook endpoints (shared/http/error-table.ts maps them by `name`). */
export class WebhooksError extends Error {
  override name = 'WebhooksError';
}

/** The client has no webhook with this id. */
export class UnknownWebhookError extends WebhooksError {
  override name = 'UnknownWebhookError';
  constructor(readonly webhookId = '') {
    super(`Unknown webhook ${webhookId}`);
  }
}

/** The client already has as many webhooks as it may have. */
export class WebhookLimitError extends WebhooksError {
  override name = 'WebhookLimitError';
  constructor(readonly limit = 0) {
    super(`A client has at most ${limit} webhooks; delete one first`);
  }
}
