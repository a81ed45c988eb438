// CI guard for scripts/test.sh: reads vitest's JSON report and fails when an integration or e2e test did not run
// (skipped, todo, or pending), so a run cannot pass without the real services.
// Usage: node scripts/check-no-skips.mjs .vitest-report.json
import { readFileSync } from 'node:fs';
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
let ran = 0;
for (const result of report.testResults ?? []) {
  const path = relative(process.cwd(), result.name);
  if (!/^test\/(integration|e2e)\//.test(path)) continue;
  for (const test of result.assertionResults ?? []) {
    if (test.status === 'passed' || test.status === 'failed') ran += 1;
    else notRun.push(`${path} > ${test.fullName} (${test.status})`);
  }
}
if (notRun.length > 0) {
  console.error(
    `check-no-skips: ${notRun.length} integration test(s) did not run under CI:\n  ${notRun.join('\n  ')}`,
  );
  process.exit(1);
}
console.error(`check-no-skips: ${ran} integration/e2e test(s) ran, none skipped`);
