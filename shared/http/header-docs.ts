/**
 * The response headers the service sends, described once for the OpenAPI
 * document (components.headers). Route rows name the ones each response
 * carries; 429 and 503 answers get `retry-after` by themselves.
 */
export const headerDocs = {
  'cache-control': { description: 'Caching policy of the response (`no-store` for anything personal or one-off).', schema: { type: 'string' } },
  'retry-after': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } },
  'x-next-cursor': { description: 'Present when more items follow: pass it as `cursor` to get the next page at constant cost.', schema: { type: 'string' } },
  link: { description: 'RFC 8288 links: `<…>; rel="next"` for the next page; on deprecated routes also `rel="successor-version"`.', schema: { type: 'string' } },
  deprecation: { description: 'RFC 9745: when this route was deprecated (`@<unix seconds>`).', schema: { type: 'string' } },
  sunset: { description: 'RFC 8594: the HTTP date after which this route may stop working.', schema: { type: 'string' } },
  location: { description: 'Where the resource is, or where to go next.', schema: { type: 'string', format: 'uri-reference' } },
  'x-events-incomplete': { description: '`true` while the day is still open (today, or yesterday until 00:10 UTC), else `false`.', schema: { type: 'string', enum: ['true', 'false'] } },
  'content-disposition': { description: '`attachment; filename="<event>_<date>.csv"`.', schema: { type: 'string' } },
  'x-content-type-options': { description: '`nosniff`: the script or data may not be taken as another type.', schema: { type: 'string', enum: ['nosniff'] } },
  'referrer-policy': { description: '`no-referrer`: the confirmation link does not leak to other sites.', schema: { type: 'string' } },
  'x-robots-tag': { description: '`noindex`.', schema: { type: 'string' } },
  'idempotent-replayed': { description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`; nothing was applied again.', schema: { type: 'string', enum: ['true'] } },
  'content-security-policy': { description: 'What the page may load: nothing from elsewhere (reader and confirmation pages: images over https only, for the publisher\'s logo).', schema: { type: 'string' } },
  'x-frame-options': { description: '`DENY`: no page may frame this one.', schema: { type: 'string', enum: ['DENY'] } },
} as const;

export type HeaderName = keyof typeof headerDocs;

/** `retry-after` → `RetryAfter`: the component name of a header. */
export const headerComponent = (name: HeaderName) => name.replace(/(^|-)([a-z])/g, (_, _dash, c: string) => c.toUpperCase());
