import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hashForLog } from '../../shared/observability/index.js';
import { s3 } from '../../shared/s3.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { captureOutput } from '../helpers/logs.js';
import { newClient, request, useService, type ErrorBody, type Reply } from '../helpers/service.js';
import { rawEventObjects, recount } from '../helpers/subscribers.js';

const service = useService();

/** Makes the next `times` raw event writes to S3 fail (fault injection only). */
function failEventWrites(times: number) {
  const send = s3.send.bind(s3);
  let left = times;
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
  return vi.spyOn(s3, 'send').mockImplementation(((command: unknown) => {
    if (command instanceof PutObjectCommand && command.input.Key?.startsWith('raw/') && left > 0) {
      left--;
      return Promise.reject(Object.assign(new Error('injected S3 fault'), { name: 'InternalError' }));
    }
    return send(command as never);
  }) as typeof s3.send);
}

afterEach(() => vi.restoreAllMocks());

describe('events when S3 fails after the subscribers were written', () => {
  it('stores the events of opId lines on the retry, exactly once, dated at the change', async () => {
    const client = await newClient(service);
    const lines = ['a@x.co', 'b@x.co', 'c@x.co'].map((email, i) => ({ line: i + 1, email, opId: `import#9#${i + 1}` }));
    failEventWrites(1);
    await expect(applySubscribers(client.username, client.defaultListId, lines)).rejects.toThrow(/injected S3 fault/);
    vi.restoreAllMocks();
    expect(await rawEventObjects(client.username, 'nl_subscribe')).toEqual([]);

    const report = await applySubscribers(client.username, client.defaultListId, lines);
    expect(report).toMatchObject({ nb_created: 3, nb_subscribed: 3 });
    await applySubscribers(client.username, client.defaultListId, lines);
    const objects = await rawEventObjects(client.username, 'nl_subscribe');
    expect(objects).toHaveLength(1);
    expect(objects[0].map((e) => e.email).sort()).toEqual(['a@x.co', 'b@x.co', 'c@x.co']);
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 3 });
  });

  it('answers the list API with a 503 that says the subscribers were applied and the events were not', async () => {
    const client = await newClient(service);
    failEventWrites(10);
    const output = captureOutput();
    let reply: Reply<ErrorBody>;
    try {
      reply = await request<ErrorBody>(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, {
        method: 'POST',
        token: client.token,
        body: [{ email: 'a@x.co' }, { email: 'b@x.co' }],
      });
    } finally {
      output.restore();
    }
    expect(reply.status).toBe(503);
    expect(reply.body.cause).toBe('2 subscribers were applied, but their 2 events could not be stored (they were logged, addresses hashed); the subscriber state is complete');
    // The error lines carry the request's keys and the events, with no address in them.
    const lines = output.json().filter((l) => l.level === 'ERROR');
    const stored = lines.find((l) => l.message === 'events not stored');
    expect(stored).toMatchObject({ route: 'POST /v1/newsletters/lists/{list_id}/subscribers', clientId: client.username, function_request_id: expect.any(String) as string, correlation_id: expect.any(String) as string });
    expect((stored!.events as Array<{ emailHash: string }>).map((e) => e.emailHash).sort()).toEqual([hashForLog('a@x.co'), hashForLog('b@x.co')].sort());
    expect(lines.filter((l) => l.message === 'request failed')).toHaveLength(1);
    expect(output.text()).not.toMatch(/[ab]@x\.co/);
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 2 });
  });

  it('retries a passing S3 fault and answers 200 with every event stored', async () => {
    const client = await newClient(service);
    failEventWrites(2);
    const reply = await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, { method: 'POST', token: client.token, body: { email: 'a@x.co' } });
    expect(reply.status).toBe(200);
    expect((await rawEventObjects(client.username, 'nl_subscribe')).flat().map((e) => e.email)).toEqual(['a@x.co']);
  });
});
