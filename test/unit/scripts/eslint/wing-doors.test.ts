// The `local/wing-doors` rule (scripts/eslint/wing-doors.mjs, issue 49) on a small src/ tree made for the test: every
// import form, inside and across wings, the package root, and the autofix's specifier (or none when no door exists).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, describe, it } from 'vitest';
import wingDoors from '../../../../scripts/eslint/wing-doors.mjs';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const root = mkdtempSync(join(tmpdir(), 'wing-doors-'));
const src = join(root, 'src');
afterAll(() => rmSync(root, { recursive: true, force: true }));

// foundation/ has no index.ts of its own (so foundation/orphan.ts has no door), and foundation/bare/ has none either.
for (const file of [
  'index.ts',
  'app/index.ts',
  'app/runtime.ts',
  'app/cli/main.ts',
  'app/status/index.ts',
  'app/status/collect.ts',
  'pipeline/queue/index.ts',
  'pipeline/queue/connect.ts',
  'output/kafka/index.ts',
  'output/kafka/producer/index.ts',
  'output/kafka/producer/sink.ts',
  'foundation/orphan.ts',
  'foundation/bare/thing.ts',
  'foundation/models/index.ts',
  'foundation/models/resources.ts',
]) {
  mkdirSync(dirname(join(src, file)), { recursive: true });
  writeFileSync(join(src, file), '');
}

const options = [{ srcDir: src }];
/** The CLI's main (app/cli/, a folder without an index.ts: importers need none). */
const cli = join(src, 'app/cli/main.ts');
const queue = join(src, 'pipeline/queue/connect.ts');
/** The error for `specifier`, whose door is `to` (the folder: `to` without its `../`s and `/index.js`). */
const door = (specifier: string, to: string) => ({
  messageId: 'door',
  data: { specifier, folder: to.replace(/^(\.\.\/)+/, '').replace(/\/index\.js$/, ''), door: to },
});

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

tester.run('wing-doors', wingDoors, {
  valid: [
    // another wing, through the folder's door, in every form
    { code: "import { RESOURCES } from '../../foundation/models/index.js';", filename: cli, options },
    { code: "import type { ResourceName } from '../../foundation/models/index.js';", filename: cli, options },
    { code: "import '../../foundation/models/index.js';", filename: cli, options },
    { code: "export { RESOURCES } from '../../foundation/models/index.js';", filename: cli, options },
    { code: "export type { ResourceName } from '../../foundation/models/index.js';", filename: cli, options },
    { code: "export * from '../../foundation/models/index.js';", filename: cli, options },
    { code: "export * as models from '../../foundation/models/index.js';", filename: cli, options },
    { code: "const m = await import('../../foundation/models/index.js');", filename: cli, options },
    { code: "type R = import('../../foundation/models/index.js').R;", filename: cli, options },
    // a file directly in a wing, through the wing's index.js
    { code: "import { createRuntime } from '../../app/index.js';", filename: queue, options },
    // inside one wing: not restricted (another folder's file, a file directly in the wing)
    { code: "import { collect } from '../status/collect.js';", filename: cli, options },
    { code: "import { createRuntime } from '../runtime.js';", filename: cli, options },
    // the package root imports anything; so does a file outside src/
    { code: "export * from './foundation/models/resources.js';", filename: join(src, 'index.ts'), options },
    {
      code: "import '../src/foundation/models/resources.js';",
      filename: join(root, 'test/a.test.ts'),
      options,
    },
    // not a relative specifier, not into a wing (src/index.ts), not a string
    {
      code: "import { Kafka } from 'kafkajs'; import { readFileSync } from 'node:fs';",
      filename: cli,
      options,
    },
    { code: "import { RESOURCES } from '../../index.js';", filename: cli, options },
    {
      code: 'const m = await import(name); const n = await import(`../../foundation/${name}.js`);',
      filename: cli,
      options,
    },
  ],
  invalid: [
    {
      code: "import { RESOURCES } from '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "import { RESOURCES } from '../../foundation/models/index.js';",
    },
    {
      code: "import type { ResourceName } from '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "import type { ResourceName } from '../../foundation/models/index.js';",
    },
    {
      code: 'import { type ResourceName, RESOURCES } from "../../foundation/models/resources.js";',
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: 'import { type ResourceName, RESOURCES } from "../../foundation/models/index.js";',
    },
    {
      code: "import '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "import '../../foundation/models/index.js';",
    },
    {
      code: "export { RESOURCES } from '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "export { RESOURCES } from '../../foundation/models/index.js';",
    },
    {
      code: "export type { ResourceName } from '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "export type { ResourceName } from '../../foundation/models/index.js';",
    },
    {
      code: "export * from '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "export * from '../../foundation/models/index.js';",
    },
    {
      code: "export * as resources from '../../foundation/models/resources.js';",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "export * as resources from '../../foundation/models/index.js';",
    },
    {
      code: "const m = await import('../../foundation/models/resources.js');",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "const m = await import('../../foundation/models/index.js');",
    },
    {
      code: 'const m = await import(`../../foundation/models/resources.js`);',
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: 'const m = await import(`../../foundation/models/index.js`);',
    },
    {
      code: "type R = import('../../foundation/models/resources.js').R;",
      filename: cli,
      options,
      errors: [door('../../foundation/models/resources.js', '../../foundation/models/index.js')],
      output: "type R = import('../../foundation/models/index.js').R;",
    },
    {
      // a folder's sub-folder, and the sub-folder's own index.ts: the door is the wing folder's
      code: "import { sink } from '../../output/kafka/producer/sink.js';\nimport { p } from '../../output/kafka/producer/index.js';",
      filename: cli,
      options,
      errors: [
        door('../../output/kafka/producer/sink.js', '../../output/kafka/index.js'),
        door('../../output/kafka/producer/index.js', '../../output/kafka/index.js'),
      ],
      output:
        "import { sink } from '../../output/kafka/index.js';\nimport { p } from '../../output/kafka/index.js';",
    },
    {
      // a file directly in another wing: the wing's index.js
      code: "import { createRuntime } from '../../app/runtime.js';",
      filename: queue,
      options,
      errors: [door('../../app/runtime.js', '../../app/index.js')],
      output: "import { createRuntime } from '../../app/index.js';",
    },
    {
      // a folder's own index.ts re-exporting another wing; a path that leaves src/ and comes back
      code: "export { a } from '../../foundation/models/resources.js';\nexport { b } from '../../../src/foundation/models/resources.js';",
      filename: join(src, 'pipeline/queue/index.ts'),
      options,
      errors: [
        door('../../foundation/models/resources.js', '../../foundation/models/index.js'),
        door('../../../src/foundation/models/resources.js', '../../foundation/models/index.js'),
      ],
      output:
        "export { a } from '../../foundation/models/index.js';\nexport { b } from '../../foundation/models/index.js';",
    },
    {
      // no index.ts to go through: reported, not fixed
      code: "import { o } from '../../foundation/orphan.js';\nimport { t } from '../../foundation/bare/thing.js';",
      filename: cli,
      options,
      errors: [
        { messageId: 'noDoor', data: { specifier: '../../foundation/orphan.js', folder: 'foundation' } },
        {
          messageId: 'noDoor',
          data: { specifier: '../../foundation/bare/thing.js', folder: 'foundation/bare' },
        },
      ],
      output: null,
    },
  ],
});
