// ESLint flat config: typescript-eslint's type-aware recommended rules over everything tsconfig.json
// compiles (src, test, bench), plus scripts/. Formatting is Prettier's job (npm run lint runs both).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Build output (dist/, packages/client/dist/) is generated, not source.
  { ignores: ['**/dist/**', 'node_modules/**', 'bench/tmp/**', 'bench/results/**', 'src/client/models.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Unused names are errors, except the ones deliberately marked with a leading underscore.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // vitest types its asymmetric matchers (`expect.any(String)`, `expect.objectContaining`) as
    // `any`, so every `toMatchObject({ id: expect.any(String) })` would be reported.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    // The SQLite store is synchronous behind the async Store interface: `async` on its methods is
    // what turns a synchronous SQLite error (busy, constraint, closed) into the rejected promise
    // callers handle with .catch(); without it the error would throw past them.
    files: ['src/store/sqlite-store.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // The browser-side console spec is compiled by its own tsconfig (DOM lib), which the project
    // service cannot find by name.
    files: ['test/console-browser.test.ts', 'test/console-usage-browser.test.ts', 'test/console-first-use.test.ts', 'test/console-models-browser.test.ts'],
    languageOptions: { parserOptions: { projectService: false, project: ['test/tsconfig.browser.json'] } },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
  // Node build scripts, outside every tsconfig: name the Node globals they use.
  { files: ['**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
