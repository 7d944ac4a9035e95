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
