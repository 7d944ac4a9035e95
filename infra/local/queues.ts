/**
 * The job table's SQS queues (and EventBridge PutEvents) locally: a server for the real SDK clients, and per queue a
 * poller with the event source mapping's rules (batch size, window, concurrency, random spread over batches, partial
 * batch responses, dead letters, fair groups). `drain()` flushes and waits for tests and benchmarks; local only.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { jobList, type JobDef } from '../../shared/jobs.js';
import { invokeJob } from './jobs.js';

const ACCOUNT = '000000000000';

/** SQS's longest message delay (DelaySeconds), in seconds. */
const MAX_DELAY_SECONDS = 900;

/** Batches gathered at once per queue: Lambda's SQS event source polls with at least five pollers. */
export const POLLERS = 5;

interface Message {
  messageId: string;
  body: string;
  /** SentTimestamp (Unix ms, the sender's clock). */
  sentAt: number;
  /** When a poller was handed it (performance.now()): the start of its batching window. */
  gatheredAt: number;
  receiveCount: number;
  /** MessageGroupId: the tenant of a fair queue (absent: a tenant of its own). */
  group?: string;
}

interface QueueOptions {
  batchSize: number;
  maxBatchingWindowSeconds: number;
  maxConcurrency: number;
  maxReceiveCount: number;
}

/** One queue and its poller. */
class LocalQueue {
  /** The batches being gathered, one per poller. */
  private gathering: Message[][] = Array.from({ length: POLLERS }, () => []);

  /** Pollers gathering at once (POLLERS; a test that looks at one batch's calls sets 1 while it sends, then back). */
  set pollers(n: number) {
    const waiting = this.gathering.flat();
    this.gathering = Array.from({ length: n }, () => []);
    this.gather(waiting);
  }
  private running = 0;
  /** Messages in flight per MessageGroupId (the fair queue's measure of a tenant). */
  private readonly inFlight = new Map<string, number>();
  private retrying = 0;
  private timer: NodeJS.Timeout | undefined;
  private hurry = 0;
  private idle: Array<() => void> = [];
  readonly deadLetters: Message[] = [];
  /** Batches invoked so far and their sizes (the benchmark prints them). */
  readonly batches: number[] = [];

  constructor(
    readonly name: string,
    private readonly options: QueueOptions,
    private readonly invoke: (event: unknown) => Promise<unknown>,
    private readonly log: (line: string) => void,
  ) {}

  send(body: string, delaySeconds = 0, group?: string): string {
    const message: Message = { messageId: randomUUID(), body, sentAt: Date.now(), gatheredAt: performance.now(), receiveCount: 0, group };
    if (delaySeconds > 0) {
      // Delayed like a retry: drain() waits for it.
      this.retrying++;
      setTimeout(() => {
        this.retrying--;
        message.sentAt = Date.now();
        message.gatheredAt = performance.now();
        this.gather([message]);
        this.schedule();
      }, delaySeconds * 1000);
      return message.messageId;
    }
    this.gather([message]);
    this.schedule();
    return message.messageId;
  }

  /** Hands messages to the pollers, each to one at random (SQS delivers in no order). */
  private gather(messages: Message[]): void {
    for (const m of messages) this.gathering[Math.floor(Math.random() * this.gathering.length)].push(m);
  }

  private get waiting(): number {
    return this.gathering.reduce((n, b) => n + b.length, 0);
  }

  /**
   * Sends a poller's batch now when it is full, a drain is asked or the window of its oldest message is over; else waits for that.
   * The window is a duration on the poller's clock (in AWS, not the sender's): timed with performance.now(), not Date, so a process
   * whose Date is moved (bench/sim-clock.ts sets it to each replayed view's log time) still gathers for the window's real seconds.
   */
  private schedule(): void {
    for (const batch of this.gathering) {
      while (batch.length > 0 && this.running < this.options.maxConcurrency) {
        const windowOver = performance.now() - batch[0].gatheredAt >= this.options.maxBatchingWindowSeconds * 1000;
        if (!(batch.length >= this.options.batchSize || this.hurry > 0 || windowOver)) break;
        this.run(this.take(batch));
      }
    }
    const oldest = Math.min(...this.gathering.filter((b) => b.length > 0).map((b) => b[0].gatheredAt));
    if (Number.isFinite(oldest) && !this.timer && this.running < this.options.maxConcurrency) {
      const wait = Math.max(0, oldest + this.options.maxBatchingWindowSeconds * 1000 - performance.now());
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
    }
    this.checkIdle();
  }

  /**
   * The next batch of a poller: its own messages in order; or, as an SQS fair queue when messages carry a
   * MessageGroupId, the waiting messages of the groups with the fewest in flight first, whichever poller asks.
   * (SQS starts preferring quiet tenants once one holds more than a tenth of those in flight; this always does.)
   */
  private take(batch: Message[]): Message[] {
    if (!this.gathering.some((b) => b.some((m) => m.group !== undefined))) return batch.splice(0, this.options.batchSize);
    const load = (m: Message) => (m.group === undefined ? 0 : (this.inFlight.get(m.group) ?? 0));
    const taken = new Set(
      this.gathering
        .flat()
        .sort((a, b) => load(a) - load(b) || a.gatheredAt - b.gatheredAt)
        .slice(0, this.options.batchSize),
    );
    for (const b of this.gathering) b.splice(0, b.length, ...b.filter((m) => !taken.has(m)));
    return [...taken];
  }

  private run(batch: Message[]): void {
    this.running++;
    for (const m of batch) if (m.group !== undefined) this.inFlight.set(m.group, (this.inFlight.get(m.group) ?? 0) + 1);
    this.batches.push(batch.length);
    for (const m of batch) m.receiveCount++;
    const event = {
      Records: batch.map((m) => ({
        messageId: m.messageId,
        receiptHandle: m.messageId,
        body: m.body,
        attributes: { ApproximateReceiveCount: String(m.receiveCount), SentTimestamp: String(m.sentAt), SenderId: ACCOUNT, ApproximateFirstReceiveTimestamp: String(Date.now()) },
        messageAttributes: {},
        md5OfBody: md5(m.body),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:local:${ACCOUNT}:${this.name}`,
        awsRegion: 'local',
      })),
    };
    void this.invoke(event)
      .then(
        (result) => {
          const failures = new Set(((result as { batchItemFailures?: Array<{ itemIdentifier: string }> })?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
          return batch.filter((m) => failures.has(m.messageId));
        },
        (err: Error) => {
          this.log(`queue ${this.name}: batch of ${batch.length} failed: ${err.message}`);
          return batch;
        },
      )
      .then((failed) => {
        this.running--;
        for (const m of batch) if (m.group !== undefined) this.inFlight.set(m.group, this.inFlight.get(m.group)! - 1);
        this.retry(failed);
        this.schedule();
      });
  }

  /** Failed messages are visible again after a second (their visibility timeout, locally), or dead-lettered. */
  private retry(failed: Message[]): void {
    const again: Message[] = [];
    for (const m of failed) {
      if (m.receiveCount < this.options.maxReceiveCount) again.push(m);
      else {
        this.deadLetters.push(m);
        this.log(`queue ${this.name}: message ${m.messageId} dead-lettered after ${m.receiveCount} receives`);
      }
    }
    if (again.length === 0) return;
    this.retrying++;
    setTimeout(() => {
      this.retrying--;
      this.gather(again);
      this.schedule();
    }, 1000);
  }

  private checkIdle(): void {
    if (this.waiting > 0 || this.running > 0 || this.retrying > 0) return;
    for (const done of this.idle.splice(0)) done();
  }

  /** Sends what waits without the window and resolves when nothing waits or runs. */
  async drain(): Promise<void> {
    this.hurry++;
    try {
      await new Promise<void>((done) => {
        this.idle.push(done);
        this.schedule();
      });
    } finally {
      this.hurry--;
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/** What PutEvents put on the local change bus. */
export interface LocalBusEntry {
  EventBusName?: string;
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Time?: number;
}

export interface LocalQueues {
  endpoint: string;
  /** Entries put on the local event bus, in order. */
  bus: LocalBusEntry[];
  /** Queues without a consumer (the webhook dead-letter queue), by name: the message bodies sent to each. */
  sinks: Map<string, string[]>;
  /** Environment of the handlers: the SQS endpoint and each queue's URL variable. */
  env: Record<string, string>;
  queues: Map<string, LocalQueue>;
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** The queue URL variables of the job table's queue triggers. */
const QUEUE_ENV: Record<string, (job: JobDef) => QueueOptions | undefined> = {
  TRACKING_QUEUE_URL: (job) => ('trackingQueue' in job.trigger ? job.trigger.trackingQueue : undefined),
  // Fed by S3 notifications (infra/local/notifications.ts), not by the handlers.
  CHANGES_QUEUE_URL: (job) => ('eventChanges' in job.trigger ? job.trigger.eventChanges : undefined),
  WEBHOOK_QUEUE_URL: (job) => ('webhookDeliveries' in job.trigger ? job.trigger.webhookDeliveries : undefined),
};

/** Queues without a consumer, by their URL variable: the dead-letter queue the webhook deliveries are sent to after their last retry. */
const SINK_ENV = { WEBHOOK_DEAD_LETTER_QUEUE_URL: 'webhookDeadLetters' };

/** The local change bus's name (EVENT_BUS_NAME). */
export const LOCAL_BUS_NAME = 'local-changes';

/**
 * Starts the local queues on a free port (or `port`). `invoke` runs a job's batch (default: its handler in this
 * thread; a benchmark runs it in a thread of its own, bench/local-stack.ts). `maxConcurrency` caps a job's batches
 * at once below its row's, by job id: in AWS each batch has a function of its own, locally they share one thread and
 * one DynamoDB Local, where more at once only makes each batch slower (`npm start` sets it for the page views).
 */
export async function startLocalQueues({
  port = 0,
  log = console.log,
  invoke = invokeJob,
  maxConcurrency = {},
}: { port?: number; log?: (line: string) => void; invoke?: (job: JobDef & { id: string }, event: unknown) => Promise<unknown>; maxConcurrency?: Record<string, number> } = {}): Promise<LocalQueues> {
  const queues = new Map<string, LocalQueue>();
  const bus: LocalBusEntry[] = [];
  const sinks = new Map<string, string[]>(Object.values(SINK_ENV).map((name) => [name, []]));
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/_local/drain') {
      void drain().then(() => reply(200, { drained: true }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let input: {
        QueueUrl?: string;
        MessageBody?: string;
        DelaySeconds?: number;
        MessageGroupId?: string;
        Entries?: Array<{ Id: string; MessageBody: string; DelaySeconds?: number; MessageGroupId?: string }>;
      };
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof input;
      } catch {
        return reply(400, { __type: 'com.amazonaws.sqs#InvalidRequest', message: 'not JSON' });
      }
      if (target === 'AWSEvents.PutEvents' && Array.isArray(input.Entries)) {
        const entries = input.Entries as unknown as LocalBusEntry[];
        // EventBridge's limit: 1 to 10 entries per call, else the whole call is refused.
        if (entries.length < 1 || entries.length > 10) {
          return reply(400, { __type: 'ValidationException', message: `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10 (got ${entries.length})` });
        }
        bus.push(...entries);
        return reply(200, { FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: randomUUID() })) });
      }
      const name = String(input.QueueUrl ?? '').split('/').pop() ?? '';
      const sink = sinks.get(name);
      if (sink && target === 'AmazonSQS.SendMessage' && typeof input.MessageBody === 'string') {
        sink.push(input.MessageBody);
        return reply(200, { MessageId: randomUUID(), MD5OfMessageBody: md5(input.MessageBody) });
      }
      const queue = queues.get(name);
      if (!queue) return reply(400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: `no queue ${input.QueueUrl}` });
      // As SQS: a delay is whole seconds up to 15 minutes (a longer wait is the sender's to make in hops).
      const badDelay = [input.DelaySeconds, ...(input.Entries ?? []).map((e) => e.DelaySeconds)].find((d) => d !== undefined && !(Number.isInteger(d) && d >= 0 && d <= MAX_DELAY_SECONDS));
      if (badDelay !== undefined) {
        return reply(400, { __type: 'com.amazonaws.sqs#InvalidParameterValue', message: `Value ${badDelay} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${MAX_DELAY_SECONDS}, if provided.` });
      }
      if (target === 'AmazonSQS.SendMessage' && typeof input.MessageBody === 'string') {
        return reply(200, { MessageId: queue.send(input.MessageBody, input.DelaySeconds ?? 0, input.MessageGroupId), MD5OfMessageBody: md5(input.MessageBody) });
      }
      if (target === 'AmazonSQS.SendMessageBatch' && Array.isArray(input.Entries)) {
        const Successful = input.Entries.map((e) => ({ Id: e.Id, MessageId: queue.send(e.MessageBody, e.DelaySeconds ?? 0, e.MessageGroupId), MD5OfMessageBody: md5(e.MessageBody) }));
        return reply(200, { Successful, Failed: [] });
      }
      reply(400, { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: `${target} is not supported locally` });
    });
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const env: Record<string, string> = { AWS_ENDPOINT_URL_SQS: endpoint, AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint, EVENT_BUS_NAME: LOCAL_BUS_NAME };
  for (const [variable, name] of Object.entries(SINK_ENV)) env[variable] = `${endpoint}/${ACCOUNT}/${name}`;
  for (const [name, optionsOf] of Object.entries(QUEUE_ENV)) {
    for (const job of jobList) {
      const options = optionsOf(job);
      if (!options) continue;
      queues.set(job.id, new LocalQueue(job.id, { ...options, maxConcurrency: Math.min(options.maxConcurrency, maxConcurrency[job.id] ?? Infinity) }, (event) => invoke(job, event), log));
      env[name] = `${endpoint}/${ACCOUNT}/${job.id}`;
    }
  }
  const drain = async () => {
    await Promise.all([...queues.values()].map((q) => q.drain()));
  };
  return {
    endpoint,
    env,
    bus,
    sinks,
    queues,
    drain,
    stop: async () => {
      for (const q of queues.values()) q.stop();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
