/**
 * `npm run bench:subscribers`: 20,000 new subscribers in one POST, then the
 * same 20,000 updated, through the local gateway against DynamoDB Local,
 * next to a raw BatchWriteItem of the same 20,000 items in the same run,
 * with the DynamoDB calls and write units per line of each phase counted.
 */
import { meter } from './ddb-meter.js';
import { startBenchStack, timed } from './local-stack.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const N = Number(process.env.BENCH_LINES ?? 20_000);
const stack = await startBenchStack();
try {
  const { createClient } = await import('../shared/clients/clients.js');
  const { batchWrite, ddb } = await import('../shared/db/client.js');
  const calls = meter(ddb as never);
  // Timed phases run unmetered; the calls are counted in a second, untimed pass of the same phases on other lists.
  calls.enable(false);
  const phase = (work: () => Promise<unknown>) => timed(work);
  const metered = async (work: () => Promise<unknown>) => {
    calls.reset();
    calls.enable(true);
    await work();
    calls.enable(false);
    return calls.report(N);
  };
  const { toItem } = await import('../shared/subscribers/store.js');
  const { keys } = await import('../shared/db/keys.js');
  const { defaultGuid } = await import('../shared/subscribers/rules.js');

  const { client, apiKey } = await createClient(`bench-${Date.now()}`);
  const token = (await (await fetch(`${stack.url}/v1/token?username=${client.id}&password=${apiKey}`)).json()).token as string;
  const lines = Array.from({ length: N }, (_, i) => ({ email: `reader${i}@bench.example`, data_first_name: `Reader ${i}` }));
  const post = (body: unknown) => postTo(client.defaultListId, body);
  const postTo = async (listId: number, body: unknown) => {
    const res = await fetch(`${stack.url}/v1/newsletters/lists/${listId}/subscribers`, {
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
  const rawOf = (listId: number) => rawItems.map((Item) => ({ PutRequest: { Item: { ...Item, ...keys.subscriber(client.id, listId, Item.email) } } }));
  // DynamoDB Local runs its first calls of each kind on a cold JVM (the first 20,000 raw writes ≈ 1.8× slower, the
  // first service write ≈ 1.4×): warm both sides up on scratch lists, then measure the raw baseline before and
  // after the service's phases and keep the faster one (the strictest baseline).
  await batchWrite(rawOf(997));
  const { createList } = await import('../shared/lists/lists.js');
  const scratch = await createList(client.id, 'warm-up');
  const warm = lines.slice(0, 5_000);
  for (const body of [warm, warm.map((l) => ({ ...l, data_first_name: '-' }))]) await postTo(scratch.id, body);
  const rawBefore = await phase(() => batchWrite(rawOf(999)));
  let created: Record<string, number> = {};
  const create = await phase(async () => (created = await post(lines)));
  let updated: Record<string, number> = {};
  const update = await phase(async () => (updated = await post(lines.map((l) => ({ ...l, data_first_name: `${l.data_first_name}!` })))));
  const rawAfter = await phase(() => batchWrite(rawOf(998)));
  const [rawMs, createMs, updateMs] = [Math.min(rawBefore, rawAfter), create, update];
  const meteredList = await createList(client.id, 'metered');
  const perLine = {
    raw: await metered(() => batchWrite(rawOf(996))),
    new: await metered(() => postTo(meteredList.id, lines)),
    updated: await metered(() => postTo(meteredList.id, lines.map((l) => ({ ...l, data_first_name: `${l.data_first_name}!` })))),
  };
  const count = await (await fetch(`${stack.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { headers: { 'x-service-client-token': token } })).json();

  // Small writes during a bulk write: a POST of N lines into a list holding 300 members while, every 100 ms, one
  // single-subscriber POST, one unsubscribe of a member or one users/delete of a member goes to the same list.
  const busyList = await createList(client.id, 'busy');
  await postTo(busyList.id, Array.from({ length: 300 }, (_, i) => ({ email: `member${i}@bench.example` })));
  const send = async (path: string, body: unknown) => {
    const started = performance.now();
    const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-client-token': token }, body: JSON.stringify(body) });
    await res.text();
    return { status: res.status, ms: performance.now() - started };
  };
  const small: Array<Promise<{ status: number; ms: number; kind: string }>> = [];
  let bulkDone = false;
  const busyStarted = performance.now();
  const bulkWrite = postTo(busyList.id, lines).finally(() => (bulkDone = true));
  for (let i = 0; !bulkDone; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const kind = ['subscribe', 'unsubscribe', 'users/delete'][i % 3];
    const subscribersPath = `/v1/newsletters/lists/${busyList.id}/subscribers`;
    const sent =
      kind === 'subscribe'
        ? send(subscribersPath, { email: `single${i}@bench.example` })
        : kind === 'unsubscribe'
          ? send(subscribersPath, { email: `member${i}@bench.example`, subscribed: false })
          : send('/v1/users/delete', [{ email: `member${i}@bench.example` }]);
    small.push(sent.then((r) => ({ ...r, kind })));
  }
  await bulkWrite;
  const busyMs = performance.now() - busyStarted;
  const smallResults = await Promise.all(small);
  const sortedMs = smallResults.map((r) => r.ms).sort((a, b) => a - b);
  const pct = (p: number) => sortedMs[Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1)] ?? 0;
  const busyCount = await (await fetch(`${stack.url}/v1/newsletters/lists/${busyList.id}/subscribers/count`, { headers: { 'x-service-client-token': token } })).json();
  const { recountList } = await import('./recount.js');
  const busyTruth = await recountList(client.id, busyList.id);

  const rate = (ms: number) => Math.round(N / (ms / 1000));
  console.log(`subscribers benchmark: ${N} lines, DynamoDB Local, gateway on loopback`);
  console.log(`  raw BatchWriteItem (25/request, 8 in flight): ${rawMs.toFixed(0)} ms  (${rate(rawMs)} items/s; before ${rawBefore.toFixed(0)} ms, after ${rawAfter.toFixed(0)} ms, the faster is the baseline)`);
  console.log(`  POST new subscribers:     ${createMs.toFixed(0)} ms  (${rate(createMs)} lines/s)  ratio to raw ${(createMs / rawMs).toFixed(2)}x  nb_created=${created.nb_created}`);
  console.log(`  POST same, data changed:  ${updateMs.toFixed(0)} ms  (${rate(updateMs)} lines/s)  ratio to raw ${(updateMs / rawMs).toFixed(2)}x  nb_data_changed=${updated.nb_data_changed}`);
  console.log(`  count after: ${JSON.stringify(count)}`);
  for (const [name, report] of Object.entries(perLine)) console.log(`  DynamoDB calls, ${name} (counted in a second, untimed pass):\n${report.map((l) => `    ${l}`).join('\n')}`);
  const not200 = smallResults.filter((r) => r.status !== 200);
  console.log(
    `  small writes during a ${N}-line POST (${busyMs.toFixed(0)} ms): ${smallResults.length} (subscribe, unsubscribe, users/delete), p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms, max ${sortedMs.at(-1)?.toFixed(0)} ms, not 200: ${not200.length}; count ${JSON.stringify(busyCount)} recount ${JSON.stringify(busyTruth)}`,
  );
  if (not200.length > 0 || JSON.stringify(busyCount) !== JSON.stringify(busyTruth)) throw new Error('small writes during a bulk write: wrong result');
  if (created.nb_created !== N || updated.nb_data_changed !== N || count.subscribed !== N) throw new Error('benchmark result is wrong');
} finally {
  await stack.stop();
}
