/**
 * The young generation a function's Node.js runs with, in Lambda and in the local function threads: set explicitly
 * (`NODE_OPTIONS`), since Lambda's bootstrap and Node's default differ and a small one makes the tracking consumer
 * spend much of its time in scavenges (docs/benchmarks.md#recommendation-quality).
 */

/** A function's memory unless its route or job row says otherwise. */
export const DEFAULT_FUNCTION_MEMORY_MB = 512;

/** V8's semi-space for a function of `memoryMb`, in MiB (`--max-semi-space-size`). */
export const semiSpaceMb = (memoryMb: number): number => Math.floor(memoryMb / 20);

/** The same as a worker thread's `resourceLimits.maxYoungGenerationSizeMb`: V8's young generation is three semi-spaces. */
export const youngGenerationMb = (memoryMb: number): number => 3 * semiSpaceMb(memoryMb);
