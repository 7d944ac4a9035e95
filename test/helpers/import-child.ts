/**
 * Runs one import worker in its own process, against the emulators of the
 * environment it inherits; the crash test kills it (SIGKILL) mid-import.
 * Usage: node --import tsx test/helpers/import-child.ts <clientId> <fileId>
 */
import { runImport } from '../../shared/imports/worker.js';

const [clientId, fileId] = process.argv.slice(2);
// The worker's own settings (chunks, concurrency), as in AWS: only the process differs.
await runImport(clientId, Number(fileId), { owner: 'child-worker' });
