/**
 * The API description: both linters accept it (redocly's recommended rules
 * without an error, spectral's oas rules without a warning), and the typed
 * client's generated types are current.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypesSource } from '../../infra/tools/api-types.js';
import { openApiDocument } from '../../shared/http/openapi.js';
import { routeList } from '../../shared/routes.js';

const run = promisify(execFile);
const bin = (name: string) => resolve(import.meta.dirname, '../../node_modules/.bin', name);
const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
const file = join(dir, 'openapi.json');
writeFileSync(file, JSON.stringify(openApiDocument('https://api.example.org'), null, 2));
// No network, no telemetry, no update check.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What these tests read of the OpenAPI document (a view: each schema keyword is there only where the document has it). */
interface Schema {
  type: string;
  maximum: number;
  maxItems: number;
  enum: unknown[];
  items: Schema;
  anyOf: Schema[];
  properties: Record<string, Schema>;
  patternProperties: Record<string, Schema>;
}
interface OpenApiOperation {
  parameters: Array<{ name: string; in: string; schema: Schema }>;
  security: unknown;
  requestBody: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content: Record<string, unknown> }>;
}
interface OpenApiView {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { securitySchemes: Record<string, unknown> };
  servers: unknown[];
}

describe('the OpenAPI document', () => {
  it('passes redocly lint (recommended rules) with no error', { timeout: 60_000 }, async () => {
    const out = await run(bin('redocly'), ['lint', file, '--extends', 'recommended', '--format', 'json'], { env, maxBuffer: 10 * 1024 * 1024 }).catch((err: { stdout: string }) => err);
    const report = JSON.parse(out.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('passes spectral lint (spectral:oas) with no warning', { timeout: 60_000 }, async () => {
    const ruleset = join(dir, '.spectral.yaml');
    writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const out = await run(bin('spectral'), ['lint', file, '--ruleset', ruleset, '--format', 'json', '--quiet'], { env, maxBuffer: 10 * 1024 * 1024 }).catch((err: { stdout: string }) => err);
    const results = JSON.parse(out.stdout || '[]') as Array<{ code: string; severity: number; message: string; path: string[] }>;
    // severity 0 error, 1 warning
    expect(results.filter((r) => r.severity <= 1).map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual([]);
  });

  it('types integers, booleans, arrays and the token as the service means them', () => {
    const doc = openApiDocument('http://localhost:3000') as unknown as OpenApiView;
    const params = (path: string, method = 'get') => Object.fromEntries(doc.paths[path][method].parameters.map((p) => [p.name, p.schema]));
    expect(params('/v1/newsletters/lists/{list_id}/subscribers')).toMatchObject({ list_id: { type: 'integer' }, offset: { type: 'integer' }, count: { type: 'integer', maximum: 1000 } });
    expect(params('/v1/files/{file_id}').file_id.type).toBe('integer');
    expect(params('/v1/clients/{block_key}/users/{user_id}/recommendations')).toMatchObject({
      rows: { type: 'integer' },
      start: { type: 'integer' },
      shuffle: { type: 'boolean' },
      redir_https: { type: 'boolean' },
      noredir: { type: 'boolean' },
      'excluded[]': { type: 'array', items: { type: 'string' } },
    });
    const line = doc.paths['/v1/newsletters/lists/{list_id}/subscribers'].post.requestBody.content['application/json'].schema.anyOf[1];
    expect(line.maxItems).toBe(20000);
    expect(line.items.properties.unsubscribed_cause.enum).toEqual(['READER', 'PUBLISHER']);
    expect(Object.keys(line.items.patternProperties)).toEqual(['^data_[A-Za-z0-9_.-]{1,64}$']);
    expect(doc.paths['/v1/users/delete'].post.requestBody.content['application/json'].schema.items).toMatchObject({ type: 'object', required: ['email'] });
    const optin = doc.paths['/v1/subscribe/{tracking_key}'].post.requestBody.content['application/json'].schema;
    expect(optin.properties).toMatchObject({ email_lists: { type: 'array', items: { type: 'integer' } }, open_tracking_consent: { type: 'boolean' }, update: { type: 'boolean' } });
    expect(doc.components.securitySchemes.clientToken).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Service-Client-Token' }));
    for (const route of routeList) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      expect(op.security, route.id).toEqual(route.auth === 'token' ? [{ clientToken: [] }] : []);
      // The token is the security scheme, not a parameter; the one header parameter is Idempotency-Key where the row takes it.
      expect(op.parameters.filter((p) => p.in === 'header').map((p) => (p as { name?: string }).name), route.id).toEqual('idempotencyKey' in route ? ['Idempotency-Key'] : []);
    }
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://localhost:3000' })]);
    expect(Object.keys(doc.paths['/v1/clients/{block_key}/users/{user_id}/recommendations'].get.responses['200'].content)).toEqual(['application/json', 'application/javascript']);
  });

  it('generated the typed client from the current document (npm run gen:api-types)', async () => {
    expect(readFileSync(API_TYPES_FILE, 'utf8')).toBe(await apiTypesSource());
  });
});
