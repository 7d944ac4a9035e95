import type http from 'node:http';
import { createGateway, listen, type StaticMount } from './gateway.js';

/** Static pages served next to the API locally (the browser library, the demo site, dev pages). */
export const localMounts: StaticMount[] = [];

/** Starts the local gateway with the local static mounts. */
export async function startLocalServer(port: number): Promise<http.Server> {
  const server = createGateway({ mounts: localMounts });
  await listen(server, port);
  return server;
}
