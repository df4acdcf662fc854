/**
 * ESLint for the whole tree, run by `npm run lint` as `eslint --config scripts/eslint.config.js`.
 * With --config, the patterns below are relative to the working directory (the repository root).
 * Recommended rules of ESLint, typescript-eslint (syntax only: type-aware rules are too slow here;
 * svelte-check does the type checking) and eslint-plugin-svelte, tuned to catch mistakes, not style:
 * Prettier owns the layout (package.json "prettier", and the files it leaves alone in the format scripts).
 */
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import ts from 'typescript-eslint';
import svelteConfig from '../svelte.config.js';

export default defineConfig(
  // Build output, shipped data, test artefacts (as in .gitignore) and generated code.
  globalIgnores([
    'dist/',
    'public/',
    'test-output/',
    'runs/',
    'out/',
    '.scratch/',
    '0/',
    '**/__screenshots__/',
    'src/core/buffer/simd/scan-wasm.ts',
  ]),
  js.configs.recommended,
  ts.configs.recommended,
  svelte.configs.recommended,
  {
    languageOptions: {
      // The tree holds page, worker and Node code; TypeScript (svelte-check) knows which is which.
      globals: { ...globals.browser, ...globals.worker, ...globals.node },
      parserOptions: { extraFileExtensions: ['.svelte'] },
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: ts.parser, svelteConfig } },
  },
  {
    rules: {
      // Matching control characters is this code's purpose where it does it (terminal-safe output,
      // OPFS file names, tests that they are escaped); the rule flags only those.
      'no-control-regex': 'off',
      // It flags every Map, Set, Date and URLSearchParams in a .svelte.ts, locals included: all 14 of
      // its findings were locals or plain private fields, none a reactive value mutated in place.
      'svelte/prefer-svelte-reactivity': 'off',
      // `_name` marks a parameter or binding kept on purpose (an interface's signature, a skipped
      // tuple slot); a rest sibling drops a key from a copy.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Tests poke at JSON and at values of the wrong type on purpose.
    files: ['tests/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
