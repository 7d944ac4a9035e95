/**
 * An in-memory fake of the DynamoDB calls the list writer makes (unit tests
 * only): Get/Put/Delete/Update, BatchGet/BatchWrite, TransactWrite and Query
 * on one table keyed by pk/sk, with the few condition and update expressions
 * the writer uses. Installed on the shared document client with vi.spyOn;
 * `failAt` lets a test kill the writer at a chosen call.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { vi } from 'vitest';
import { ddb } from '../../shared/db/client.js';

type Item = Record<string, unknown>;
type Names = Record<string, string> | undefined;
type Values = Record<string, unknown> | undefined;

/** What the fake reads of a command's input: one view over the commands it serves. */
interface Input {
  Key: Item;
  Item: Item;
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Names;
  ExpressionAttributeValues: Record<string, unknown>;
  RequestItems: Record<string, unknown>;
  TransactItems: Array<Record<'Put' | 'Delete' | 'Update' | 'ConditionCheck', Input | undefined>>;
  KeyConditionExpression: string;
  Limit?: number;
  ProjectionExpression?: string;
  ReturnValues?: string;
}

/** An item as a read with `projection` returns it: only the top-level attributes named (all of them without one). */
function project(item: Item, projection: string | undefined, names: Names): Item {
  if (!projection) return clone(item);
  const wanted = projection.split(',').map((part) => part.trim()).map((part) => (part.startsWith('#') ? names?.[part] ?? part : part));
  return Object.fromEntries(wanted.filter((name) => name in item).map((name) => [name, clone(item[name])]));
}

const keyOf = (key: Item) => `${String(key.pk)}\u0000${String(key.sk)}`;
const clone = <T>(value: T): T => structuredClone(value);

function resolveName(token: string, names: Names): string {
  return token.startsWith('#') ? names![token] : token;
}

/** Evaluates the condition expressions the writer uses: a = b, a < b, a > b, attribute_(not_)exists(a), (NOT) contains(a, b) (a set or a string), joined by OR / AND (no parentheses). */
function holds(item: Item | undefined, expression: string | undefined, names: Names, values: Values): boolean {
  if (!expression) return true;
  if (expression.includes(' OR ')) return expression.split(' OR ').some((part) => holds(item, part, names, values));
  if (expression.includes(' AND ')) return expression.split(' AND ').every((part) => holds(item, part, names, values));
  const exists = /^attribute_(not_)?exists\((\S+)\)$/.exec(expression.trim());
  if (exists) {
    const present = item !== undefined && item[resolveName(exists[2], names)] !== undefined;
    return exists[1] ? !present : present;
  }
  const contains = /^(NOT )?contains\((\S+), (:\S+)\)$/.exec(expression.trim());
  if (contains) {
    // A set holds the value; a string, as a substring (DynamoDB's contains on a String).
    const set = item?.[resolveName(contains[2], names)];
    const value = values![contains[3]];
    const found = set instanceof Set ? set.has(value) : typeof set === 'string' && typeof value === 'string' && set.includes(value);
    return contains[1] ? !found : found;
  }
  const compare = /^(\S+) (=|<|>) (:\S+)$/.exec(expression.trim());
  if (!compare) throw new Error(`memory table: unsupported condition ${expression}`);
  const left = item?.[resolveName(compare[1], names)];
  const right = values![compare[3]];
  if (left === undefined) return false;
  if (compare[2] === '=') return left === right;
  return compare[2] === '<' ? (left as number) < (right as number) : (left as number) > (right as number);
}

/** Applies SET a = :v, … / ADD a :n (a number or a set), … / DELETE a :set, … / REMOVE a, … clauses. */
function update(item: Item, expression: string, names: Names, values: Values): void {
  const clauses = expression.split(/\b(?=SET |ADD |REMOVE |DELETE )/);
  for (const clause of clauses) {
    const [verb, ...rest] = clause.trim().split(' ');
    const parts = rest.join(' ').split(',').map((p) => p.trim()).filter(Boolean);
    for (const part of parts) {
      if (verb === 'SET') {
        const [name, value] = part.split('=').map((p) => p.trim());
        item[resolveName(name, names)] = clone(values![value]);
      } else if (verb === 'ADD') {
        const [name, value] = part.split(' ');
        const attribute = resolveName(name, names);
        const added = values![value];
        if (added instanceof Set) item[attribute] = new Set([...((item[attribute] as Set<unknown> | undefined) ?? []), ...added]);
        else item[attribute] = Number(item[attribute] ?? 0) + Number(added);
      } else if (verb === 'DELETE') {
        const [name, value] = part.split(' ');
        const attribute = resolveName(name, names);
        const left = new Set((item[attribute] as Set<unknown> | undefined) ?? []);
        for (const element of values![value] as Set<unknown>) left.delete(element);
        // DynamoDB keeps no empty set: the attribute goes.
        if (left.size > 0) item[attribute] = left;
        else delete item[attribute];
      } else if (verb === 'REMOVE') {
        delete item[resolveName(part, names)];
      } else throw new Error(`memory table: unsupported update ${expression}`);
    }
  }
}

function conditionFailed(): Error {
  return Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException', $metadata: { httpStatusCode: 400 } });
}

export function memoryTable() {
  const items = new Map<string, Item>();
  const calls: string[] = [];
  /** Called before each call with its name and number; may throw (a killed writer) or return a count of batch items to land. */
  let failAt: ((name: string, call: number) => void) | undefined;
  /** Milliseconds each call takes (a timer, as a network round trip is): 0 answers within the same turn of the event loop. */
  let latencyMs = 0;
  /** Called after a call took effect; the caller gets its answer once the returned promise settles (a paused writer). */
  let pauseAfter: ((command: unknown) => Promise<void> | undefined) | undefined;
  /** Called before a call takes effect; it takes effect once the returned promise settles (a request delayed in the network). */
  let pauseBefore: ((command: unknown) => Promise<void> | undefined) | undefined;

  const writeOne = (op: { Put?: { Item: Item; ConditionExpression?: string; ExpressionAttributeNames?: Names; ExpressionAttributeValues?: Values }; Delete?: { Key: Item; ConditionExpression?: string; ExpressionAttributeNames?: Names; ExpressionAttributeValues?: Values }; Update?: { Key: Item; UpdateExpression: string; ConditionExpression?: string; ExpressionAttributeNames?: Names; ExpressionAttributeValues?: Values } }, apply: boolean): boolean => {
    if (op.Put) {
      const current = items.get(keyOf(op.Put.Item));
      if (!holds(current, op.Put.ConditionExpression, op.Put.ExpressionAttributeNames, op.Put.ExpressionAttributeValues)) return false;
      if (apply) items.set(keyOf(op.Put.Item), clone(op.Put.Item));
      return true;
    }
    if (op.Delete) {
      const current = items.get(keyOf(op.Delete.Key));
      if (!holds(current, op.Delete.ConditionExpression, op.Delete.ExpressionAttributeNames, op.Delete.ExpressionAttributeValues)) return false;
      if (apply) items.delete(keyOf(op.Delete.Key));
      return true;
    }
    const u = op.Update!;
    const current = items.get(keyOf(u.Key));
    if (!holds(current, u.ConditionExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues)) return false;
    if (apply) {
      const next = clone(current ?? { ...u.Key });
      update(next, u.UpdateExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues);
      items.set(keyOf(u.Key), next);
    }
    return true;
  };

  const send = async (command: unknown): Promise<unknown> => {
    await pauseBefore?.(command);
    const out = await apply(command);
    await pauseAfter?.(command);
    return out;
  };

  const apply = async (command: unknown): Promise<unknown> => {
    const name = (command as object).constructor.name;
    calls.push(name);
    failAt?.(name, calls.length);
    if (latencyMs > 0) await new Promise((done) => setTimeout(done, latencyMs));
    const input = (command as { input: Input }).input;
    if (command instanceof GetCommand) return { Item: clone(items.get(keyOf(input.Key))) };
    if (command instanceof PutCommand || command instanceof DeleteCommand || command instanceof UpdateCommand) {
      const op = command instanceof PutCommand ? { Put: input } : command instanceof DeleteCommand ? { Delete: input } : { Update: input };
      if (!writeOne(op, true)) throw conditionFailed();
      return command instanceof UpdateCommand && input.ReturnValues === 'ALL_NEW' ? { Attributes: clone(items.get(keyOf(input.Key))) } : {};
    }
    if (command instanceof BatchGetCommand) {
      const [table, request] = Object.entries(input.RequestItems as Record<string, { Keys: Item[]; ProjectionExpression?: string; ExpressionAttributeNames?: Names }>)[0];
      const found = request.Keys.map((k) => items.get(keyOf(k))).filter((item) => item !== undefined);
      return { Responses: { [table]: found.map((item) => project(item, request.ProjectionExpression, request.ExpressionAttributeNames)) } };
    }
    if (command instanceof BatchWriteCommand) {
      const [, requests] = Object.entries(input.RequestItems as Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }>>)[0];
      for (const r of requests) {
        if (r.PutRequest) items.set(keyOf(r.PutRequest.Item), clone(r.PutRequest.Item));
        else items.delete(keyOf(r.DeleteRequest!.Key));
      }
      return {};
    }
    if (command instanceof TransactWriteCommand) {
      const ops = input.TransactItems;
      const reasons = ops.map((op) => {
        if (op.ConditionCheck) {
          const c = op.ConditionCheck;
          return holds(items.get(keyOf(c.Key)), c.ConditionExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues) ? 'None' : 'ConditionalCheckFailed';
        }
        return writeOne(op, false) ? 'None' : 'ConditionalCheckFailed';
      });
      if (reasons.some((r) => r !== 'None')) {
        throw Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: reasons.map((Code) => ({ Code })), $metadata: { httpStatusCode: 400 } });
      }
      for (const op of ops) if (!op.ConditionCheck) writeOne(op, true);
      return {};
    }
    if (command instanceof QueryCommand) {
      const pk = input.ExpressionAttributeValues[':pk'] ?? input.ExpressionAttributeValues[':p'];
      let found = [...items.values()].filter((i) => i.pk === pk).sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
      const between = /sk BETWEEN :a AND :b/.test(input.KeyConditionExpression);
      if (between) found = found.filter((i) => String(i.sk) >= String(input.ExpressionAttributeValues[':a']) && String(i.sk) <= String(input.ExpressionAttributeValues[':b']));
      const limited = input.Limit ? found.slice(0, input.Limit) : found;
      // As DynamoDB: a LastEvaluatedKey whenever `Limit` items were evaluated, whether or not more follow.
      const more = input.Limit !== undefined && found.length >= input.Limit;
      return { Items: limited.map((item) => project(item, input.ProjectionExpression, input.ExpressionAttributeNames)), Count: limited.length, LastEvaluatedKey: more ? { pk, sk: limited.at(-1)!.sk } : undefined };
    }
    throw new Error(`memory table: unsupported command ${name}`);
  };

  const spy = vi.spyOn(ddb, 'send').mockImplementation(send as never);
  return {
    items,
    calls,
    /** Items whose pk starts with `prefix`. */
    partition: (pk: string) => [...items.values()].filter((i) => i.pk === pk),
    failAt(hook: ((name: string, call: number) => void) | undefined) {
      failAt = hook;
    },
    /** Holds the answer of a call that took effect until the promise `hook` returns for it settles. */
    pauseAfter(hook: ((command: unknown) => Promise<void> | undefined) | undefined) {
      pauseAfter = hook;
    },
    /** Delays a call before it takes effect until the promise `hook` returns for it settles (later calls may overtake it). */
    pauseBefore(hook: ((command: unknown) => Promise<void> | undefined) | undefined) {
      pauseBefore = hook;
    },
    /** Makes every later call take `ms` (on a timer, like network I/O). */
    latency(ms: number) {
      latencyMs = ms;
    },
    restore: () => spy.mockRestore(),
  };
}
