// Type-checked lint: typescript-eslint's recommended-type-checked rules, with no-floating-promises everywhere.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  { files: ['src/cli/**', 'bench/**', 'scripts/**', 'test/**'], rules: { 'no-console': 'off' } },
  {
    // One Kafka door: only src/sink/ talks to kafkajs (the client factory, readers, producers, patches).
    files: ['src/**/*.ts'],
    ignores: ['src/sink/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'kafkajs', message: 'Kafka goes through src/sink/ (createKafkaClient and its modules).' }] },
      ],
    },
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
