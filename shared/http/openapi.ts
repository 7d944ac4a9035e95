import { toJsonSchema, type ConversionConfig } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { config } from '../config.js';
import { outboundWebhooks, routeList } from '../routes.js';
import { headerComponent, headerDocs, type HeaderName } from './header-docs.js';
import type { AnySchema, ResponseDoc, RouteDef } from './route.js';
import { ErrorSchema, InvalidRequestSchema } from './schemas.js';

/**
 * Request bodies are described as clients may send them (`input`: e.g. a
 * boolean or its string); parameters and responses as the service means
 * them (`output`: `list_id` an integer, `shuffle` a boolean), which is what a
 * generated client should type.
 */
const jsonSchema = (schema: AnySchema, typeMode: ConversionConfig['typeMode']) => {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema as v.GenericSchema, { errorMode: 'ignore', typeMode, target: 'draft-2020-12' }) as Record<string, unknown>;
  return documentedAs(rest) as Record<string, unknown>;
};

/** A schema whose pipe carries `v.metadata({openapi: {...}})` is described by that JSON Schema instead of its conversion. */
function documentedAs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(documentedAs);
  if (!node || typeof node !== 'object') return node;
  const own = (node as { openapi?: unknown }).openapi;
  if (own && typeof own === 'object') return own;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, documentedAs(value)]));
}

const TOKEN_SCHEME = 'clientToken';

function parameters(route: RouteDef) {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.request?.params], ['query', route.request?.query]] as const) {
    if (!schema) continue;
    const js = jsonSchema(schema, 'output') as { properties?: Record<string, { description?: string }>; required?: string[] };
    for (const [name, { description, ...prop }] of Object.entries(js.properties ?? {})) {
      const array = (prop as { type?: string }).type === 'array';
      out.push({
        name,
        in: where,
        required: where === 'path' || (js.required ?? []).includes(name),
        description,
        schema: prop,
        ...(array ? { style: 'form', explode: true } : {}),
      });
    }
  }
  if (route.idempotencyKey) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe: 1 to 255 printable ASCII characters, unique per request (a UUID). The same key with the same request within 24 hours answers ' +
        'the first answer again (status and body, `Idempotent-Replayed: true`) without applying anything; the same key with another body or path is a 422; ' +
        'while the first request still runs, a 409 with `Retry-After`. Keys are per client. Only successful (2xx) answers are kept: after an error the key is free again.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
    });
  }
  return out;
}

/** Statuses every route of a kind can return, added where the row does not describe them itself. */
function implicitResponses(route: RouteDef): Record<number, ResponseDoc> {
  const error = route.legacyErrors ? InvalidRequestSchema : ErrorSchema;
  const out: Record<number, ResponseDoc> = {};
  if (route.request?.params || route.request?.query || route.request?.body) out[400] = { description: 'Invalid request; the cause names the field and the problem', schema: error };
  if (route.auth === 'token') out[401] = { description: 'Missing, unknown, expired or revoked token', schema: ErrorSchema };
  if (route.request?.body) {
    out[413] = { description: 'Request body larger than 6 MiB (API Gateway and Lambda limit)', schema: ErrorSchema };
    out[415] = { description: 'Content-Type is not one the route accepts', schema: ErrorSchema };
  }
  if (route.idempotencyKey) {
    out[409] = { description: 'A request with the same `Idempotency-Key` is still being processed; `Retry-After` says when to try again', schema: ErrorSchema, headers: ['retry-after'] };
    out[422] = { description: 'The `Idempotency-Key` was used within 24 hours for a different request (another body or path)', schema: ErrorSchema };
  }
  out[431] = { description: 'Request line and headers larger than the gateway takes (a query string of many kilobytes)', schema: ErrorSchema };
  out[500] = { description: 'Unexpected error; it has been logged and the request changed nothing it did not report', schema: ErrorSchema };
  return out;
}

const headerRefs = (names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${headerComponent(name)}` }]));

function response(status: number, doc: ResponseDoc) {
  const headers = [...(doc.headers ?? []), ...(status === 429 || status === 503 ? (['retry-after'] as const) : [])];
  const contents = [{ contentType: doc.contentType ?? 'application/json', schema: doc.schema }, ...(doc.alternatives ?? [])];
  const hasBody = doc.schema || doc.contentType || doc.alternatives;
  return {
    description: doc.description,
    headers: headers.length > 0 ? headerRefs([...new Set(headers)]) : undefined,
    content: hasBody ? Object.fromEntries(contents.map((c) => [c.contentType, c.schema ? { schema: jsonSchema(c.schema, 'output') } : { schema: { type: 'string' } }])) : undefined,
  };
}

function operation(route: RouteDef & { id: string }) {
  const types = route.request?.bodyTypes ?? ['json'];
  // A route that reads its body itself (the reader pages' forms) documents it by `bodyDoc` alone.
  const body = route.request?.body || route.request?.bodyDoc
    ? {
        required: true,
        content: Object.fromEntries(
          types.map((t) => [t === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', { schema: jsonSchema((route.request!.bodyDoc ?? route.request!.body)!, 'input') }]),
        ),
      }
    : undefined;
  const responses: Record<number, ResponseDoc> = { ...implicitResponses(route), ...route.responses };
  if (route.idempotencyKey) {
    for (const [status, doc] of Object.entries(responses)) {
      if (Number(status) < 300) responses[Number(status)] = { ...doc, headers: [...(doc.headers ?? []), 'idempotent-replayed'] };
    }
  }
  return {
    operationId: route.id,
    summary: route.summary,
    description: route.description ?? route.summary,
    tags: route.tags,
    deprecated: route.deprecated,
    security: route.auth === 'token' ? [{ [TOKEN_SCHEME]: [] }] : [],
    parameters: parameters(route),
    requestBody: body,
    responses: Object.fromEntries(
      Object.entries(responses)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, doc]) => [status, response(Number(status), doc)]),
    ),
  };
}

const tagDescriptions: Record<string, string> = {
  auth: 'Temporary client tokens',
  lists: "The client's newsletter lists",
  subscribers: 'Subscribers of a list: listing, counting, batch subscribe/unsubscribe/update, deletion',
  deprecated: 'The deprecated list-less subscribers API (default list)',
  events: 'Daily CSV files of newsletter events (premium)',
  imports: 'CSV import by URL',
  'opt-in': 'Double opt-in: form endpoint and confirmation link',
  recommendations: 'Personalised article recommendations, tracking and the browser library',
  articles: 'The article catalogue of recommendations: articles known ahead of traffic (API and feed)',
  meta: 'This API description',
  webhooks: "Webhooks: signed POSTs of subscriber changes to the client's own URL",
  statistics: 'Daily statistics of lists and events',
};

/** OpenAPI 3.1 `webhooks`: the requests the service sends to registered URLs. */
function webhookDocs() {
  return Object.fromEntries(
    Object.entries(outboundWebhooks).map(([id, hook]) => [
      id,
      {
        post: {
          operationId: id,
          summary: hook.summary,
          description: hook.description,
          tags: hook.tags,
          // The receiver checks the signature headers; no token or key is sent.
          security: [],
          parameters: Object.entries(hook.headers).map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } })),
          requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(hook.schema, 'output') } } },
          responses: { '200': { description: 'Any 2xx acknowledges the event' }, default: { description: 'Anything else (or no answer in time): retried with the same webhook-id' } },
        },
      },
    ]),
  );
}

/** The OpenAPI 3.1 document, generated from the route table and its valibot schemas. */
export function openApiDocument(serverUrl = config.publicBaseUrl) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routeList) {
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation(route);
  }
  const tags = [...new Set(routeList.flatMap((r) => r.tags))].map((name) => ({ name, description: tagDescriptions[name] ?? name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Newsletter subscribers, events and recommendations service',
      version: '1.0.0',
      description: 'Generated from the route table (shared/routes.ts). Decisions where the spec is silent: docs/api.md.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'Platform team', url: `${serverUrl}/v1/docs` },
    },
    servers: [{ url: serverUrl, description: 'This deployment (http locally, https in AWS)' }],
    tags,
    paths,
    webhooks: webhookDocs(),
    components: {
      securitySchemes: {
        [TOKEN_SCHEME]: { type: 'apiKey', in: 'header', name: 'X-Service-Client-Token', description: 'A token from GET /v1/token (valid TOKEN_TTL_SECONDS; revoked when the API key is rotated)' },
      },
      headers: Object.fromEntries(Object.entries(headerDocs).map(([name, doc]) => [headerComponent(name as HeaderName), doc])),
    },
  };
}
