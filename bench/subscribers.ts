/**
 * `npm run bench:subscribers`: 20,000 new subscribers in one POST, then the
 * same 20,000 updated, through the local gateway against DynamoDB Local,
 * next to a raw BatchWriteItem of the same 20,000 items in the same run.
 */
import { startBenchStack, timed } from './local-stack.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const N = Number(process.env.BENCH_LINES ?? 20_000);
const stack = await startBenchStack();
try {
  const { createClient } = await import('../shared/clients/clients.js');
  const { batchWrite } = await import('../shared/db/client.js');
  const { toItem } = await import('../shared/subscribers/store.js');
  const { defaultGuid } = await import('../shared/subscribers/rules.js');

  const { client, apiKey } = await createClient(`bench-${Date.now()}`);
  const token = (await (await fetch(`${stack.url}/v1/token?username=${client.id}&password=${apiKey}`)).json()).token as string;
  const lines = Array.from({ length: N }, (_, i) => ({ email: `reader${i}@bench.example`, data_first_name: `Reader ${i}` }));
  const post = async (body: unknown) => {
    const res = await fetch(`${stack.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-client-token': token },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`POST ${res.status}: ${await res.text()}`);
    return (await res.json()).report;
  };

  // Baseline: the same items written raw into another list partition, no reads, no conditions, no counters.
  const now = new Date().toISOString();
  const rawItems = lines.map((l) =>
    toItem(client.id, 999, { email: l.email, guid: defaultGuid(l.email), subscribed: true, subscribedAt: now, data: { data_first_name: l.data_first_name }, createdAt: now, updatedAt: now, version: 1 }),
  );
  const rawMs = await timed(() => batchWrite(rawItems.map((Item) => ({ PutRequest: { Item } }))));
  let created: Record<string, number> = {};
  const createMs = await timed(async () => (created = await post(lines)));
  let updated: Record<string, number> = {};
  const updateMs = await timed(async () => (updated = await post(lines.map((l) => ({ ...l, data_first_name: `${l.data_first_name}!` })))));
  const count = await (await fetch(`${stack.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { headers: { 'x-service-client-token': token } })).json();

  const rate = (ms: number) => Math.round(N / (ms / 1000));
  console.log(`subscribers benchmark: ${N} lines, DynamoDB Local, gateway on loopback`);
  console.log(`  raw BatchWriteItem (25/request, 8 in flight): ${rawMs.toFixed(0)} ms  (${rate(rawMs)} items/s)`);
  console.log(`  POST new subscribers:     ${createMs.toFixed(0)} ms  (${rate(createMs)} lines/s)  ratio to raw ${(createMs / rawMs).toFixed(2)}x  nb_created=${created.nb_created}`);
  console.log(`  POST same, data changed:  ${updateMs.toFixed(0)} ms  (${rate(updateMs)} lines/s)  ratio to raw ${(updateMs / rawMs).toFixed(2)}x  nb_data_changed=${updated.nb_data_changed}`);
  console.log(`  count after: ${JSON.stringify(count)}`);
  if (created.nb_created !== N || updated.nb_data_changed !== N || count.subscribed !== N) throw new Error('benchmark result is wrong');
} finally {
  await stack.stop();
}
