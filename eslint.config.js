// ESLint flat config: typescript-eslint's type-aware recommended rules over everything tsconfig.json
// compiles (src, test, bench), plus scripts/. Formatting is Prettier's job (npm run lint runs both).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/tmp/**', 'bench/results/**', 'src/client/models.generated.ts'] },
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
  { files: ['**/*.js'], extends: [tseslint.configs.disableTypeChecked] },
);
