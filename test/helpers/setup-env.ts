/**
 * Points every test worker at the emulators started by the global setup,
 * before any handler module is loaded. Refuses to run against anything that
 * is not on this machine.
 */
import { inject } from 'vitest';
import { applyEnv, localServiceEnv } from '../../infra/local/env.js';
import { startRecording } from '../../infra/local/recording.js';

const services = inject('services');
for (const endpoint of [services.dynamoEndpoint, services.s3Endpoint]) {
  if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(endpoint)) {
    throw new Error(`Tests run only against local emulators, not ${endpoint}`);
  }
}
applyEnv(localServiceEnv({ ...services, publicBaseUrl: 'http://127.0.0.1:1' }), { override: true });
// What the handlers do is recorded per function and checked against the stack when the run ends (global-setup.ts).
startRecording(inject('recordDir'));
