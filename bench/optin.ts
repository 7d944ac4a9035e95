/**
 * `npm run bench:optin`: N double opt-ins through the local gateway
 * (POST /v1/subscribe → outbox email → confirmation link), next to the
 * baseline of the same number of bare rate-limit counter updates in the same
 * run, and a hot-key burst checking the limiter lets exactly its limit through.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startBenchStack, timed } from './local-stack.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const N = Number(process.env.BENCH_OPTINS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const stack = await startBenchStack();

async function pool<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1);
const rate = (n: number, ms: number) => `${((n / ms) * 1000).toFixed(0)}/s`;

try {
  const { createClient, createForm, setClientSetting } = await import('../shared/clients/clients.js');
  const { consume } = await import('../shared/ratelimit/ratelimit.js');
  const { outboxDir } = await import('../shared/mail/outbox-mailer.js');
  const { client } = await createClient(`bench-${Date.now()}`);
  await setClientSetting(client.id, 'rateLimits', { perIpPerMinute: 1_000_000, perKeyPerMinute: 1_000_000 });
  const formKey = await createForm(client.id, { listIds: [client.defaultListId], global: false });
  const ids = Array.from({ length: N }, (_, i) => i);

  // DynamoDB Local's JVM warms up first, so that the baseline is not its start-up.
  await pool(Array.from({ length: 200 }, (_, i) => i), async (i) => void (await consume(`warm#${i % 20}`, 1_000_000)));
  const baselineMs = await timed(() => pool(ids, async (i) => void (await consume(`bench#${i % 50}`, 1_000_000))));

  const latencies: number[] = [];
  const subscribeMs = await timed(() =>
    pool(ids, async (i) => {
      const start = performance.now();
      const res = await fetch(`${stack.url}/v1/subscribe/${client.trackingKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: `reader${i}@bench.example`, form_key: formKey }).toString(),
      });
      if (res.status !== 200) throw new Error(`subscribe ${res.status}: ${await res.text()}`);
      latencies.push(performance.now() - start);
    }),
  );
  latencies.sort((a, b) => a - b);

  const files = (await readdir(outboxDir())).filter((n) => n.endsWith('.eml'));
  const links = await Promise.all(files.map(async (n) => /https?:\/\/\S+\/v1\/optin\/confirm\/[A-Za-z0-9_-]+/.exec((await readFile(join(outboxDir(), n), 'utf8')).replace(/=\r?\n/g, ''))![0]));
  const confirmMs = await timed(() =>
    pool(links, async (link) => {
      const res = await fetch(link);
      if (res.status !== 200) throw new Error(`confirm ${res.status}`);
    }),
  );
  const count = await (await import('../shared/subscribers/service.js')).countSubscribers(client.id, client.defaultListId);

  const burst = 200;
  const hotKey = `hot#${Date.now()}`;
  let allowed = 0;
  const burstMs = await timed(() =>
    Promise.all(
      Array.from({ length: burst }, async () => {
        if ((await consume(hotKey, 50)).allowed) allowed++;
      }),
    ),
  );

  console.log(`opt-in benchmark: ${N} opt-ins, ${CONCURRENCY} in flight, local gateway + DynamoDB Local + outbox`);
  console.log(`  baseline: ${N} rate-limit counter updates     ${baselineMs.toFixed(0)} ms (${rate(N, baselineMs)})`);
  console.log(`  POST /v1/subscribe (2 counters, keys, pending, token, email): ${subscribeMs.toFixed(0)} ms (${rate(N, subscribeMs)}), latency p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms, ${(subscribeMs / baselineMs).toFixed(1)}x baseline`);
  console.log(`  emails in the outbox: ${files.length}; confirmations: ${links.length} in ${confirmMs.toFixed(0)} ms (${rate(links.length, confirmMs)})`);
  console.log(`  list count after confirming: subscribed ${count.subscribed} (expected ${N})`);
  console.log(`  hot key: ${burst} concurrent requests against a limit of 50 → ${allowed} allowed in ${burstMs.toFixed(0)} ms`);
  if (files.length !== N || count.subscribed !== N || allowed !== 50) process.exitCode = 1;
} finally {
  await stack.stop();
}
