// CI guard for scripts/test.sh: reads vitest's JSON report and fails when an integration or e2e test did not run
// (skipped, todo, or pending), so a run cannot pass without the real services.
// Also lists the failed tests (name, duration, first line of the error), and writes them to <summary> when given.
// Usage: node scripts/check-no-skips.mjs .vitest-report.json [summary-file]
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[2] ?? '.vitest-report.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.error(`check-no-skips: cannot read ${file}: ${error.message}`);
  process.exit(1);
}
const notRun = [];
const failed = [];
let ran = 0;
for (const result of report.testResults ?? []) {
  const path = relative(process.cwd(), result.name);
  for (const test of result.assertionResults ?? [])
    if (test.status === 'failed')
      failed.push(
        `${path} > ${test.fullName} (${Math.round(test.duration ?? 0)} ms): ${String(
          test.failureMessages?.[0] ?? '',
        )
          .split('\n')[0]
          .slice(0, 300)}`,
      );
  // A file that failed outside its tests (a hook, an import) has no failed test to name.
  if (result.status === 'failed' && !(result.assertionResults ?? []).some((t) => t.status === 'failed'))
    failed.push(
      `${path}: ${String(result.message ?? '')
        .split('\n')[0]
        .slice(0, 300)}`,
    );
  if (!/^test\/(integration|e2e)\//.test(path)) continue;
  for (const test of result.assertionResults ?? []) {
    if (test.status === 'passed' || test.status === 'failed') ran += 1;
    else notRun.push(`${path} > ${test.fullName} (${test.status})`);
  }
}
// The failures again, at the end of the run's output (a CI log is often read from its tail).
const summary = process.argv[3];
if (summary !== undefined) writeFileSync(summary, failed.map((f) => `FAILED ${f}\n`).join(''));
if (failed.length > 0)
  console.error(`check-no-skips: ${failed.length} test(s) failed:\n  ${failed.join('\n  ')}`);
if (notRun.length > 0) {
  console.error(
    `check-no-skips: ${notRun.length} integration test(s) did not run under CI:\n  ${notRun.join('\n  ')}`,
  );
  process.exit(1);
}
console.error(`check-no-skips: ${ran} integration/e2e test(s) ran, none skipped`);
