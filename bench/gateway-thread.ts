/**
 * A local gateway in a worker thread (bench/local-stack.ts `gatewayThread`):
 * its own event loop and its own instances of the handlers' modules (so its
 * own copies, as a separate Lambda container has), on a free port of
 * 127.0.0.1. The environment is the parent's (DynamoDB Local, the local
 * queue's SQS endpoint); with `workerData.simClock` it follows the parent's
 * simulated clock (bench/sim-clock.ts). Posts its port, closes on any message.
 */
import { parentPort, workerData } from 'node:worker_threads';

const { simClock } = (workerData ?? {}) as { simClock?: SharedArrayBuffer };
if (simClock) (await import('./sim-clock.js')).followSimClock(simClock);
const { createGateway, listen } = await import('../infra/local/gateway.js');
const server = createGateway();
const port = await listen(server, 0);
parentPort!.postMessage({ port });
parentPort!.once('message', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
