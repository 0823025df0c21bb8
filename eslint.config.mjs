// ESLint flat config: typescript-eslint recommended rules over src and test.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // The Cassandra store's modules are internal to src/store: the rest of the code uses its barrel (store/cassandra).
    files: ['src/**/*.ts'],
    ignores: ['src/store/**', 'src/index.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/store/cassandra/*'], message: 'import from the store/cassandra barrel; its modules are internal to src/store' }] }],
    },
  },
);
