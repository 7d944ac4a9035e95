import { defineConfig } from 'vitest/config';

// Node 20 is what these machines have; the SDK's notice about Node 22 is noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

// No wall-clock bound is asserted here: latencies and speed ratios are the benchmarks' (bench/, docs/benchmarks.md).
export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup-env.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    pool: 'forks',
    maxWorkers: 2,
  },
});
