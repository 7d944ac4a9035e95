import type * as v from 'valibot';
import type { HeaderName } from './header-docs.js';

export type AnySchema = v.GenericSchema | v.GenericSchemaAsync;

/**
 * How a route authenticates (spec §5): `token` reads X-Service-Client-Token;
 * `key` takes a key in the path or body, checked by the service; `none` is public.
 */
export type AuthKind = 'none' | 'token' | 'key';

/** What a route's function may touch; the CDK stack grants exactly this. */
export interface Access {
  table?: 'R' | 'RW';
  /** `W`: puts objects only (the sweeper's resume markers). */
  imports?: 'R' | 'W' | 'RW';
  /** `W`: adds event records only (put, no read, no delete); `RW` also reads and deletes (the assembler's runs). */
  events?: 'R' | 'W' | 'RW';
  /** Sends email through SES. */
  mail?: boolean;
  /** Sends page views to the tracking queue (sqs:SendMessage only). */
  trackingQueue?: boolean;
  /** Sends webhook deliveries to their queue and its dead-letter queue (sqs:SendMessage only). */
  webhookQueue?: boolean;
  /** Puts events on the change bus (events:PutEvents only). */
  eventBus?: boolean;
}

export interface ResponseDoc {
  description: string;
  schema?: AnySchema;
  /** Content type of the body; JSON when absent. */
  contentType?: string;
  /** Further content types the same status may carry (JSONP's `application/javascript`), with their schemas. */
  alternatives?: Array<{ contentType: string; schema?: AnySchema }>;
  /** The response headers it carries (shared/http/header-docs.ts). */
  headers?: HeaderName[];
}

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** API Gateway path syntax: `/v1/lists/{list_id}`. */
  path: string;
  /** Handler entry, relative to the project root; exports `handler`. */
  handler: string;
  auth: AuthKind;
  access: Access;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  request?: {
    body?: AnySchema;
    query?: AnySchema;
    params?: AnySchema;
    /** Body content types accepted; JSON only when absent. */
    bodyTypes?: Array<'json' | 'form'>;
    /** A more detailed body schema for the OpenAPI document, when `body` checks only the envelope (lines are checked one by one). */
    bodyDoc?: AnySchema;
  };
  /** 400s in the deprecated API's shape `{status: "INVALID_REQUEST", message}` (spec 4.10). */
  legacyErrors?: boolean;
  responses: Record<number, ResponseDoc>;
  /** Package files shipped beside the handler (name → path in node_modules), served as they are (shared/http/assets.ts). */
  assets?: Record<string, string>;
  /**
   * Takes an `Idempotency-Key` header (shared/http/idempotency.ts; the handler wraps its function with `idempotent`):
   * the OpenAPI document shows the header and the 409 and 422 answers.
   */
  idempotencyKey?: true;
  /** Lambda settings beyond the defaults. */
  lambda?: { timeoutSeconds?: number; memoryMb?: number };
}

/** Turns `/v1/lists/{list_id}` (or a greedy `{path+}`) into a matcher returning the path parameters. */
export function compilePath(path: string): (actual: string) => Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = path
    .split('/')
    .map((segment) => {
      const param = /^\{([a-z_]+)(\+)?\}$/i.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1]);
      return param[2] ? '(.+)' : '([^/]+)';
    })
    .join('/');
  const re = new RegExp(`^${pattern}$`);
  return (actual) => {
    const match = re.exec(actual);
    if (!match) return undefined;
    const params: Record<string, string> = {};
    names.forEach((name, i) => {
      params[name] = safeDecode(match[i + 1]);
    });
    return params;
  };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
