/**
 * The young generation a function's Node.js runs with, in Lambda and in the
 * local threads that stand for functions (bench/local-stack.ts).
 *
 * Lambda's Node.js runtimes have started node with a semi-space of 5 % of
 * the function's memory (their published bootstrap scripts: new space =
 * memory / 10, two halves), 25 MiB at 512 MB. Node's own default is 16 MiB
 * on a machine with a few GiB and, from Node 20 on, shrinks with the memory
 * limit. So every function sets it explicitly (`NODE_OPTIONS`,
 * infra/constructs/service-function.ts), whatever its runtime's bootstrap
 * does, and the local function threads take the same size: with Node's
 * default the tracking queue's consumer thread spent about a tenth of its
 * time in scavenges (docs/benchmarks.md#recommendation-quality).
 */

/** A function's memory unless its route or job row says otherwise. */
export const DEFAULT_FUNCTION_MEMORY_MB = 512;

/** V8's semi-space for a function of `memoryMb`, in MiB (`--max-semi-space-size`). */
export const semiSpaceMb = (memoryMb: number): number => Math.floor(memoryMb / 20);

/** The same as a worker thread's `resourceLimits.maxYoungGenerationSizeMb`: V8's young generation is three semi-spaces. */
export const youngGenerationMb = (memoryMb: number): number => 3 * semiSpaceMb(memoryMb);
