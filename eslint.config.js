// Type-checked lint: typescript-eslint's recommended-type-checked rules, with no-floating-promises everywhere.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import wingDoors from './scripts/eslint/wing-doors.mjs';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.stack/', 'bin/', 'coverage/', 'tmp/', '.vitest-cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  { files: ['src/app/cli/**', 'tools/**', 'bench/**', 'scripts/**', 'test/**'], rules: { 'no-console': 'off' } },
  {
    // Inside src/output/kafka/, kafkajs' values come from one module (kafkajs-loader.ts, which createKafkaClient calls after
    // installing kafkajs-patches/): every other file takes only its types.
    files: ['src/output/kafka/**/*.ts'],
    ignores: ['src/output/kafka/kafkajs-loader.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kafkajs',
              allowTypeImports: true,
              message:
                "kafkajs' values come from loadKafkajs() (src/output/kafka/kafkajs-loader.ts), after the patches.",
            },
          ],
        },
      ],
    },
  },
  {
    // One Kafka door: only src/output/kafka/ talks to kafkajs (client, producer/, transactions/, readers/, admin/, patches).
    files: ['src/**/*.ts'],
    ignores: ['src/output/kafka/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kafkajs',
              message: 'Kafka goes through src/output/kafka/ (createKafkaClient and its modules).',
            },
          ],
          patterns: [
            {
              group: ['@confluentinc/schemaregistry/dist/*'],
              message:
                "The registry library's deep paths are imported in one place: src/output/encoding/schema-registry-library.ts (pinned, version-checked).",
            },
          ],
        },
      ],
    },
  },
  {
    // The one door to the registry library's deep paths (the rule above, without its pattern).
    files: ['src/output/encoding/schema-registry-library.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kafkajs',
              message: 'Kafka goes through src/output/kafka/ (createKafkaClient and its modules).',
            },
          ],
        },
      ],
    },
  },
  {
    // One door per folder (issue 49): an import from another wing of src/ names the folder's index.js
    // (scripts/eslint/wing-doors.mjs; `npx eslint --fix src` rewrites the rest).
    files: ['src/**/*.ts'],
    plugins: { local: { rules: { 'wing-doors': wingDoors } } },
    rules: { 'local/wing-doors': ['error', { srcDir: `${import.meta.dirname}/src` }] },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
  {
    // Plain Node scripts outside the TypeScript project (scripts/**/*.mjs): linted without type information.
    files: ['**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);
