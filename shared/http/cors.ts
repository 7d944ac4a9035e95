/**
 * CORS for browsers calling from publishers' pages (the opt-in form, the
 * browser library). The CDK HTTP API and the local gateway both apply it.
 */
export const corsPolicy = {
  allowOrigins: ['*'],
  allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
  allowHeaders: ['content-type', 'x-service-client-token', 'idempotency-key'],
  exposeHeaders: ['link', 'deprecation', 'sunset', 'x-next-cursor', 'x-events-incomplete', 'retry-after', 'idempotent-replayed'],
  maxAgeSeconds: 600,
};
