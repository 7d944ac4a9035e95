/**
 * Every response the integration tests receive from a route is checked
 * against the OpenAPI document (ajv, draft 2020-12): its status must be
 * described for the operation, its body must match the schema of its
 * content type, and every header the service sent must be described. A
 * response the document does not describe fails the test that received it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../shared/http/openapi.js';
import { compilePath } from '../../shared/http/route.js';

type Operation = { responses: Record<string, { content?: Record<string, { schema?: object }>; headers?: Record<string, unknown> }> };

/** Headers of the transport, the gateway or CORS, not of an operation. */
const GENERIC_HEADERS = /^(content-type|content-length|date|connection|keep-alive|transfer-encoding|vary|access-control-.*)$/;

let compiled: { operations: Array<{ method: string; template: string; match: (path: string) => unknown; op: Operation }>; ajv: Ajv2020 } | undefined;
const validators = new Map<object, ValidateFunction>();

function contract() {
  if (compiled) return compiled;
  const doc = openApiDocument('http://127.0.0.1') as unknown as { paths: Record<string, Record<string, Operation>> };
  const operations = Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), template, match: compilePath(template), op })),
  );
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  compiled = { operations, ajv };
  return compiled;
}

/**
 * Throws when the response of `method url` is not described by the API
 * document. Paths that are no route (the demo site, the dev outbox, the
 * `$default` fallback's 404) are not checked.
 */
export function checkResponse(method: string, url: string, status: number, headers: Headers, text: string): void {
  const { operations, ajv } = contract();
  const path = new URL(url).pathname;
  const found = operations.find((o) => o.method === method.toUpperCase() && o.match(path));
  if (!found) return;
  const where = `${method} ${found.template} → ${status}`;
  const described = found.op.responses[String(status)];
  if (!described) throw new Error(`API document: ${where} is not a described status (${Object.keys(found.op.responses).join(', ')}); body: ${text.slice(0, 300)}`);
  const undocumented: string[] = [];
  headers.forEach((_value, name) => {
    if (!GENERIC_HEADERS.test(name) && !(described.headers && name in described.headers)) undocumented.push(name);
  });
  if (undocumented.length > 0) throw new Error(`API document: ${where} sends undescribed header(s) ${undocumented.join(', ')}`);
  const contentType = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!described.content) {
    if (text !== '') throw new Error(`API document: ${where} has no body in the document but sent ${contentType}: ${text.slice(0, 200)}`);
    return;
  }
  const media = Object.entries(described.content).find(([type]) => type.split(';')[0].trim().toLowerCase() === contentType);
  if (!media) throw new Error(`API document: ${where} sent ${contentType || 'no content type'}, described: ${Object.keys(described.content).join(', ')}`);
  const schema = media[1].schema;
  if (!schema || !contentType.endsWith('json')) return;
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  // NDJSON: the schema is each line's.
  const values = contentType === 'application/x-ndjson' ? text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown) : [JSON.parse(text) as unknown];
  for (const value of values) if (!validate(value)) throw new Error(`API document: ${where} body does not match: ${ajv.errorsText(validate.errors)}; body: ${text.slice(0, 300)}`);
}

/** A fetch that checks every answer of a route against the API document (for openapi-fetch). */
export const checkedFetch: typeof fetch = async (input, init) => {
  const req = new Request(input, init);
  const res = await fetch(req);
  const text = await res.clone().text();
  checkResponse(req.method, req.url, res.status, res.headers, text);
  return res;
};
