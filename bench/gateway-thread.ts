/**
 * A local gateway in a worker thread (bench/recos-tracking.ts): its own event
 * loop and its own instances of the handlers' modules (so its own copies, as a
 * separate Lambda container has), on a free port of 127.0.0.1. The environment
 * is the parent's (DynamoDB Local, the local queue's SQS endpoint). Posts its
 * port, closes on any message.
 */
import { parentPort } from 'node:worker_threads';
import { createGateway, listen } from '../infra/local/gateway.js';

const server = createGateway();
const port = await listen(server, 0);
parentPort!.postMessage({ port });
parentPort!.once('message', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
