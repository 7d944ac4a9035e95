/**
 * Kills a writer through its clients (fault injection only): from a chosen
 * call on, every DynamoDB and S3 call of this process fails, as if the
 * process had died there (nothing it does afterwards reaches the table or
 * the buckets). A batch (BatchWriteItem, BatchExecuteStatement) can be cut part-way: its first items land.
 */
import { BatchExecuteStatementCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { vi } from 'vitest';
import { ddb } from '../../shared/db/client.js';
import { s3 } from '../../shared/s3.js';
import { prng } from '../../bench/recos-data.js';

export class Killed extends Error {
  override name = 'Killed';
}

/** What a call does: go through, die before it, or (a batch) land its first `items` then die. */
export type Verdict = 'pass' | 'kill' | { items: number };

/**
 * From the call for which `decide` says 'kill' (or after the part of a batch
 * it lets land), every call fails. `decide` sees each command and a running
 * call number (DynamoDB and S3 together). Returns `restore` and whether the
 * kill happened.
 */
export function killAt(decide: (command: unknown, call: number) => Verdict) {
  const ddbSend = ddb.send.bind(ddb);
  const s3Send = s3.send.bind(s3);
  const state = { dead: false, calls: 0 };
  const guard = async <T>(command: unknown, send: (c: never) => Promise<T>): Promise<T> => {
    if (state.dead) throw new Killed('the process is dead');
    const verdict = decide(command, ++state.calls);
    if (verdict === 'pass') return send(command as never);
    state.dead = true;
    if (verdict !== 'kill' && command instanceof BatchWriteCommand) {
      const [table, requests] = Object.entries(command.input.RequestItems ?? {})[0];
      if (verdict.items > 0) await send(new BatchWriteCommand({ RequestItems: { [table]: requests.slice(0, verdict.items) } }) as never);
    }
    if (verdict !== 'kill' && command instanceof BatchExecuteStatementCommand && verdict.items > 0) {
      await send(new BatchExecuteStatementCommand({ Statements: (command.input.Statements ?? []).slice(0, verdict.items) }) as never);
    }
    throw new Killed('killed');
  };
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
  const ddbSpy = vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => guard(command, ddbSend)) as typeof ddb.send);
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
  const s3Spy = vi.spyOn(s3, 'send').mockImplementation(((command: unknown) => guard(command, s3Send)) as typeof s3.send);
  return {
    get killed() {
      return state.dead;
    },
    get calls() {
      return state.calls;
    },
    restore() {
      ddbSpy.mockRestore();
      s3Spy.mockRestore();
    },
  };
}

/** True for a batch of subscriber writes (the writer's conditional statements, shared/subscribers/writer.ts). */
export function isSubscriberBatch(command: unknown): command is BatchExecuteStatementCommand {
  return command instanceof BatchExecuteStatementCommand && (command.input.Statements ?? []).some((s) => s.Parameters?.some((p) => typeof p === 'string' && p.startsWith('SUB#')));
}

/** A small seeded generator (mulberry32, the benchmarks' `prng`), so a failing kill point can be replayed. */
export const seeded = prng;
