import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { routeList } from '../routes.js';
import type { AnySchema, RouteDef } from './route.js';

const jsonSchema = (schema: AnySchema) => {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema as v.GenericSchema, { errorMode: 'ignore', typeMode: 'input' }) as Record<string, unknown>;
  return rest;
};

function parameters(route: RouteDef) {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.request?.params], ['query', route.request?.query]] as const) {
    if (!schema) continue;
    const js = jsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, prop] of Object.entries(js.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: prop });
    }
  }
  if (route.auth === 'token') {
    out.push({ name: 'X-Service-Client-Token', in: 'header', required: true, schema: { type: 'string' }, description: 'Token from GET /v1/token' });
  }
  return out;
}

/** The OpenAPI 3.1 document, generated from the route table and its valibot schemas. */
export function openApiDocument(serverUrl?: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routeList) {
    const types = route.request?.bodyTypes ?? ['json'];
    const body = route.request?.body
      ? {
          required: true,
          content: Object.fromEntries(
            types.map((t) => [t === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', { schema: jsonSchema(route.request!.bodyDoc ?? route.request!.body!) }]),
          ),
        }
      : undefined;
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = {
      operationId: route.id,
      summary: route.summary,
      description: route.description,
      tags: route.tags,
      deprecated: route.deprecated,
      parameters: parameters(route),
      requestBody: body,
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, doc]) => [
          status,
          {
            description: doc.description,
            content: doc.schema || doc.contentType
              ? { [doc.contentType ?? 'application/json']: doc.schema ? { schema: jsonSchema(doc.schema) } : {} }
              : undefined,
          },
        ]),
      ),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Newsletter subscribers, events and recommendations service',
      version: '1.0.0',
      description: 'Generated from the route table (shared/routes.ts). Decisions where the spec is silent: docs/api.md.',
    },
    servers: serverUrl ? [{ url: serverUrl }] : [],
    paths,
  };
}
