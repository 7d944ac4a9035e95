/**
 * Bench only: a simulated wall clock, so a scenario can stand at 23:40 of a
 * chosen day whatever the real time. `Date` (and `Date.now()`) run at the
 * real pace from the instant in SIM_NOW (ISO 8601) when this module loads,
 * or from the one given to setSimNow; performance.now() and timers are
 * untouched, so durations are real; HTTP servers date their responses by
 * it. Every process of a scenario (the S3
 * emulator checks request times against its own clock, 15 minutes of skew
 * at most) must load it: `node --import tsx --import ./bench/sim-clock.ts`.
 * Worker threads of the same process follow the same clock when they call
 * {@link followSimClock} with {@link simClockBuffer} (bench/gateway-thread.ts).
 */
import http from 'node:http';

const RealDate = Date;
/** The offset from the real clock, in ms, in memory every thread of the process can share. */
let offset: Float64Array<ArrayBufferLike> = new Float64Array(new SharedArrayBuffer(8));

/** Moves this process's clock to `iso` (it runs on from there). */
export function setSimNow(iso: string): void {
  const at = RealDate.parse(iso);
  if (Number.isNaN(at)) throw new Error(`setSimNow: not an instant: ${iso}`);
  offset[0] = at - RealDate.now();
}

/** The memory that holds this thread's clock, for a worker thread to follow ({@link followSimClock}). */
export const simClockBuffer = (): SharedArrayBuffer => offset.buffer as SharedArrayBuffer;

/** This thread's clock is from now on the one of the thread that gave `buffer`. */
export function followSimClock(buffer: SharedArrayBuffer): void {
  offset = new Float64Array(buffer);
}

/**
 * This thread's clock is from now on its own, standing at `ms` (Unix ms) and
 * running on from there; later calls only move it forward. The queue
 * consumer's thread (bench/job-thread.ts) sets it to each batch's send time.
 */
export function advanceOwnSimClock(ms: number): void {
  const wanted = ms - RealDate.now();
  if (offset.buffer instanceof SharedArrayBuffer) offset = Float64Array.of(wanted);
  else if (wanted > offset[0]) offset[0] = wanted;
}

function SimDate(this: unknown, ...args: unknown[]): unknown {
  const now = new RealDate(RealDate.now() + offset[0]);
  if (!new.target) return now.toString();
  return args.length === 0 ? now : new (RealDate as unknown as new (...a: unknown[]) => Date)(...args);
}
SimDate.prototype = RealDate.prototype;
Object.assign(SimDate, { now: () => RealDate.now() + offset[0], parse: RealDate.parse, UTC: RealDate.UTC });
globalThis.Date = SimDate as unknown as DateConstructor;

// Node's HTTP servers stamp responses with the real time, and the AWS SDK corrects its clock to a server's Date
// header: the servers of the scenario (the S3 emulator, the gateway) send the simulated time instead.
// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with the response as `this` (below)
const writeHead = http.ServerResponse.prototype.writeHead as (...a: unknown[]) => http.ServerResponse;
http.ServerResponse.prototype.writeHead = function (this: http.ServerResponse, ...args: unknown[]) {
  if (!this.headersSent && !this.hasHeader('date')) this.setHeader('date', new Date().toUTCString());
  return writeHead.apply(this, args);
} as typeof http.ServerResponse.prototype.writeHead;

if (process.env.SIM_NOW) setSimNow(process.env.SIM_NOW);
