import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        // Pure code: no network, no services.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 30_000 },
      },
      {
        // Needs only Node: the simulator and the client against it (each test starts a simulator on port 0).
        test: {
          name: 'upstream',
          include: ['test/integration/simulator/**/*.test.ts', 'test/integration/client/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Needs only Node and npm: the packed tarball installed into an empty project (npm pack builds dist/ first).
        test: {
          name: 'package',
          include: ['test/integration/package/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        // Real Kafka, schema registry and Redis, found or started by the global setup.
        test: {
          name: 'services',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          exclude: [
            'test/integration/simulator/**',
            'test/integration/client/**',
            'test/integration/package/**',
          ],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 180_000,
          // The services are shared; files run one at a time on a 2-core machine.
          fileParallelism: false,
        },
      },
    ],
  },
});
