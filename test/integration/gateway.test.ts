import { describe, expect, it } from 'vitest';
import { routeList } from '../../shared/routes.js';
import { request, useService, type ErrorBody } from '../helpers/service.js';

const service = useService();

describe('errors of the gateway and the fallback function', () => {
  it('answers 404 JSON for an unknown route', async () => {
    const reply = await request(`${service.url}/v1/no/such/thing`);
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ status: 404, cause: 'No route for GET /v1/no/such/thing' });
  });

  it('answers 405 JSON with Allow for a known path and another method', async () => {
    const reply = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`, { method: 'DELETE' });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('GET');
    expect(reply.body.cause).toMatch(/Method DELETE is not allowed/);
  });

  it('answers 413 JSON for a body above the Lambda payload limit', async () => {
    const reply = await request<ErrorBody>(`${service.url}/v1/newsletters/lists`, { method: 'POST', raw: 'x'.repeat(7 * 1024 * 1024) });
    expect(reply.status).toBe(413);
    expect(reply.body.status).toBe(413);
  });

  it('answers CORS preflights', async () => {
    const reply = await request(`${service.url}/v1/newsletters/lists`, { method: 'OPTIONS' });
    expect(reply.status).toBe(204);
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('GET /v1/openapi.json', () => {
  it('describes every row of the route table', async () => {
    // What this test reads of the document: its version and each operation's id.
    const reply = await request<{ openapi: string; paths: Record<string, Record<string, { operationId: string } | undefined> | undefined> }>(`${service.url}/v1/openapi.json`);
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    for (const route of routeList) {
      expect(reply.body.paths[route.path]?.[route.method.toLowerCase()]?.operationId, `${route.method} ${route.path}`).toBe(route.id);
    }
  });
});
