import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number };

/** A JSON response. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

/** A text response of any content type. */
export function text(statusCode: number, body: string, contentType: string, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { 'content-type': contentType, ...headers }, body };
}

/** A redirect (302 by default). */
export function redirect(location: string, statusCode = 302, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { location, 'cache-control': 'no-store', ...headers }, body: '' };
}

/**
 * Paging headers: `X-Next-Cursor` and an RFC 8288 `Link: <…>; rel="next"`
 * repeating the request's query with the cursor (and without offset).
 */
export function nextPageHeaders(rawPath: string, query: Record<string, string | number | undefined>, cursor: string | undefined): Record<string, string> {
  if (!cursor) return {};
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && name !== 'offset' && name !== 'cursor') params.set(name, String(value));
  }
  params.set('cursor', cursor);
  return { 'x-next-cursor': cursor, link: `<${rawPath}?${params}>; rel="next"` };
}
