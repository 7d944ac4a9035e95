/**
 * The events bucket's S3 notifications to the change queue, locally: one notification per created `raw/` object, as
 * S3 sends them. `npm start` wires emulator and queues in one process; tests use a hub (startNotificationHub) to
 * which each test file subscribes its clients' prefixes (subscribeChanges). Local only.
 */
import http from 'node:http';

/** The prefix of raw event objects (shared/events/paths.ts): what the change queue is notified of. */
export const CHANGES_PREFIX = 'raw/';

interface S3EventRecord {
  eventName?: string;
  s3?: { object?: { key?: string } };
}

type Emulator = { onEvent(listener: (event: unknown) => void): void };

/** The records of an emulator event created under `prefix`, each as the body of its own notification (key URL-encoded as S3 does). */
function notifications(event: unknown, accept: (key: string) => boolean): Array<{ key: string; body: string }> {
  const records = (event as { Records?: S3EventRecord[] }).Records ?? [];
  return records.flatMap((record) => {
    const key = record.s3?.object?.key;
    if (!key || !record.eventName?.startsWith('ObjectCreated') || !accept(key)) return [];
    const encoded = encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+');
    return [{ key, body: JSON.stringify({ Records: [{ ...record, s3: { ...record.s3, object: { ...record.s3?.object, key: encoded } } }] }) }];
  });
}

/** Sends one SQS message to a queue URL of the local queue server. */
export async function sendTo(queueUrl: string, body: string): Promise<void> {
  const res = await fetch(new URL(queueUrl).origin, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
    body: JSON.stringify({ QueueUrl: queueUrl, MessageBody: body }),
  });
  if (!res.ok) throw new Error(`local queue ${queueUrl}: ${res.status} ${await res.text()}`);
}

/** `npm start`: every raw object the emulator reports created goes to the change queue. */
export function forwardChangeNotifications(emulator: Emulator, queueUrl: string, log: (line: string) => void = console.log): void {
  emulator.onEvent((event) => {
    for (const { body } of notifications(event, (key) => key.startsWith(CHANGES_PREFIX))) {
      sendTo(queueUrl, body).catch((err: Error) => log(`change notification not sent: ${err.message}`));
    }
  });
}

/**
 * The tests' hub: `POST /subscribe {queueUrl, prefix}` sends that queue a
 * notification of each object then created under the prefix (it must start
 * with CHANGES_PREFIX); `POST /unsubscribe {queueUrl}` stops them.
 */
export async function startNotificationHub(emulator: Emulator): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const subscriptions: Array<{ queueUrl: string; prefix: string }> = [];
  emulator.onEvent((event) => {
    for (const { queueUrl, prefix } of subscriptions) {
      for (const { body } of notifications(event, (key) => key.startsWith(prefix))) void sendTo(queueUrl, body).catch(() => undefined);
    }
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let input: { queueUrl?: unknown; prefix?: unknown };
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof input;
      } catch {
        input = {};
      }
      const queueUrl = typeof input.queueUrl === 'string' ? input.queueUrl : '';
      if (req.url === '/subscribe' && queueUrl && typeof input.prefix === 'string' && input.prefix.startsWith(CHANGES_PREFIX)) {
        subscriptions.push({ queueUrl, prefix: input.prefix });
      } else if (req.url === '/unsubscribe' && queueUrl) {
        for (let i = subscriptions.length - 1; i >= 0; i--) if (subscriptions[i].queueUrl === queueUrl) subscriptions.splice(i, 1);
      } else {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { endpoint, stop: () => new Promise<void>((done) => server.close(() => done())) };
}

/** A test file's queue gets the notifications of objects created under `prefix` (through the setup's hub). */
export async function subscribeChanges(hubEndpoint: string, queueUrl: string, prefix: string): Promise<void> {
  const res = await fetch(`${hubEndpoint}/subscribe`, { method: 'POST', body: JSON.stringify({ queueUrl, prefix }) });
  if (res.status !== 204) throw new Error(`notification hub: ${res.status}`);
}

/** Stops a test file's notifications. */
export async function unsubscribeChanges(hubEndpoint: string, queueUrl: string): Promise<void> {
  await fetch(`${hubEndpoint}/unsubscribe`, { method: 'POST', body: JSON.stringify({ queueUrl }) });
}
