import type http from 'node:http';
import { outboxDir } from '../../shared/mail/outbox-mailer.js';
import { serveOutbox } from '../../shared/mail/outbox.js';
import { createGateway, listen, type StaticMount } from './gateway.js';
import { recosMounts } from './recos-mounts.js';

/** Static pages served next to the API locally (the browser library, the demo site, dev pages). */
export const localMounts: StaticMount[] = [
  ...recosMounts(),
  /** Dev only: the opt-in emails the outbox mailer wrote. */
  { prefix: '/dev/outbox/', serve: (path) => serveOutbox(outboxDir(), path) },
];

/** Starts the local gateway with the local static mounts; `log` gets one line per request. */
export async function startLocalServer(port: number, log?: (line: string) => void): Promise<http.Server> {
  const server = createGateway({ mounts: localMounts, log });
  await listen(server, port);
  return server;
}
