/**
 * Counts what a process sends to DynamoDB, by command: calls, items written
 * (puts, updates, deletes, condition checks) and read, request bytes, and
 * the write units DynamoDB would charge (computed from each written item's
 * size, AWS's published rules: 1 unit per started KB, twice that inside a
 * transaction, and one more write per started KB for each GSI an item is in).
 * For the benchmarks' calls-per-line figures and the capacity model.
 */
interface Tally {
  calls: number;
  itemsWritten: number;
  itemsRead: number;
  requestBytes: number;
  writeUnits: number;
}

const GSI_KEYS: Array<[string, string]> = [
  ['gsi1pk', 'gsi1sk'],
  ['gsi2pk', 'gsi2sk'],
];

type AttributeValue = { S?: string; N?: string; B?: Uint8Array; BOOL?: boolean; NULL?: boolean; M?: Record<string, AttributeValue>; L?: AttributeValue[]; SS?: string[]; NS?: string[] };

/** Size of one value as DynamoDB counts it (strings and binaries by bytes, numbers by digits, maps and lists 3 bytes plus 1 per element). */
function valueBytes(v: AttributeValue): number {
  if (v === undefined || v === null || typeof v !== 'object') return plainBytes(v);
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-/, '').replace('.', '').replace(/^0+/, '').length / 2) + 1;
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.M !== undefined) return 3 + Object.entries(v.M).reduce((s, [k, x]) => s + 1 + Buffer.byteLength(k) + valueBytes(x), 0);
  if (v.L !== undefined) return 3 + v.L.reduce((s, x) => s + 1 + valueBytes(x), 0);
  if (v.SS !== undefined) return v.SS.reduce((s, x) => s + Buffer.byteLength(x), 0);
  if (v.NS !== undefined) return v.NS.reduce((s, x) => s + valueBytes({ N: x }), 0);
  return plainBytes(v);
}

/** The same for a value not marshalled yet (the stack may run this before the document client marshals). */
function plainBytes(v: unknown): number {
  if (v === undefined) return 0;
  if (v === null || typeof v === 'boolean') return 1;
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (typeof v === 'number') return Math.ceil(String(Math.abs(v)).replace('.', '').length / 2) + 1;
  if (Array.isArray(v)) return 3 + v.reduce((s: number, x) => s + 1 + plainBytes(x), 0);
  if (typeof v === 'object') return 3 + Object.entries(v as Record<string, unknown>).reduce((s, [k, x]) => s + (x === undefined ? 0 : 1 + Buffer.byteLength(k) + plainBytes(x)), 0);
  return 0;
}

/** DynamoDB's size of a marshalled item: attribute names plus values. */
export function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((s, [name, value]) => s + (value === undefined ? 0 : Buffer.byteLength(name) + valueBytes(value)), 0);
}

/** Write units of one item put: the base table plus each GSI the item has keys for. */
export function putUnits(item: Record<string, AttributeValue>, transactional: boolean): number {
  const units = Math.max(1, Math.ceil(itemBytes(item) / 1024));
  const indexes = GSI_KEYS.filter(([pk, sk]) => item[pk] !== undefined && item[sk] !== undefined).length;
  return units * (transactional ? 2 : 1) + units * indexes;
}

type Item = Record<string, AttributeValue>;
/** What the meter reads of a command's input and output (DynamoDB's shapes; a document client's before marshalling). */
interface MeteredInput {
  RequestItems?: Record<string, Array<{ PutRequest?: { Item: Item } }>>;
  TransactItems?: Array<{ Put?: { Item: Item } }>;
  Item?: Item;
}
interface MeteredOutput {
  Responses?: Record<string, unknown[]>;
  Count?: number;
  Item?: Item;
}
type Handler = (args: { input: MeteredInput; request?: { body?: unknown } }) => Promise<{ output?: MeteredOutput }>;
type Middleware = (next: Handler, context: { commandName?: string }) => Handler;
interface MeteredClient {
  middlewareStack: { add: (mw: Middleware, options: { step: 'initialize' | 'build' | 'finalizeRequest'; name: string }) => void };
}

export function meter(client: MeteredClient) {
  const tallies = new Map<string, Tally>();
  // Off while a benchmark times its phases (sizing every written item costs CPU on the machine that runs DynamoDB Local).
  let on = true;
  const tally = (name: string) => {
    let t = tallies.get(name);
    if (!t) tallies.set(name, (t = { calls: 0, itemsWritten: 0, itemsRead: 0, requestBytes: 0, writeUnits: 0 }));
    return t;
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!on) return next(args);
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const t = tally(name);
      t.calls++;
      const input = args.input;
      if (name === 'BatchWriteItem') {
        for (const requests of Object.values(input.RequestItems ?? {})) {
          for (const r of requests) {
            t.itemsWritten++;
            t.writeUnits += r.PutRequest ? putUnits(r.PutRequest.Item, false) : 1;
          }
        }
      } else if (name === 'TransactWriteItems') {
        for (const op of input.TransactItems ?? []) {
          t.itemsWritten++;
          if (op.Put) t.writeUnits += putUnits(op.Put.Item, true);
          else t.writeUnits += 2; // an Update of a small item (a counter shard), a Delete or a ConditionCheck
        }
      } else if (name === 'PutItem') {
        t.itemsWritten++;
        t.writeUnits += putUnits(input.Item!, false);
      } else if (name === 'UpdateItem' || name === 'DeleteItem') {
        t.itemsWritten++;
        t.writeUnits += 1; // the items this process updates one by one (checkpoints, counters) are small
      }
      const out = await next(args);
      const o = out.output ?? {};
      if (name === 'BatchGetItem') for (const items of Object.values(o.Responses ?? {})) t.itemsRead += items.length;
      else if (name === 'Query') t.itemsRead += o.Count ?? 0;
      else if (name === 'GetItem') t.itemsRead += o.Item ? 1 : 0;
      return out;
    },
    { step: 'initialize', name: 'benchDdbMeter' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!on) return next(args);
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const body = args.request?.body;
      if (typeof body === 'string') tally(name).requestBytes += Buffer.byteLength(body);
      else if (body instanceof Uint8Array) tally(name).requestBytes += body.length;
      return next(args);
    },
    { step: 'finalizeRequest', name: 'benchDdbBytes' },
  );
  return {
    reset: () => tallies.clear(),
    /** Counts (true) or lets calls through uncounted (false). */
    enable: (value: boolean) => {
      on = value;
    },
    snapshot: () => new Map([...tallies].map(([k, v]) => [k, { ...v }])),
    /** One line per command: calls, items and bytes per unit of work (`per` lines). */
    report(per: number, label = 'line'): string[] {
      const rows = [...tallies].sort((a, b) => b[1].calls - a[1].calls);
      const f = (n: number) => (n / per).toFixed(n / per < 0.1 ? 4 : 3);
      const total = rows.reduce((s, [, t]) => ({ calls: s.calls + t.calls, units: s.units + t.writeUnits }), { calls: 0, units: 0 });
      return [
        ...rows.map(
          ([name, t]) =>
            `${name}: ${t.calls} calls (${f(t.calls)}/${label}), ${t.itemsWritten} items written, ${t.itemsRead} read, ${Math.round(t.requestBytes / Math.max(1, t.calls))} B/call, ${t.writeUnits} write units (${f(t.writeUnits)}/${label})`,
        ),
        `all: ${total.calls} calls (${f(total.calls)}/${label}), ${total.units} write units (${f(total.units)}/${label})`,
      ];
    },
  };
}
