// ESLint (flat config, `npm test` runs it): typescript-eslint's recommended type-checked rules, plus floating
// promises and type-only imports, over everything TypeScript in the repository.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.data/', 'test/helpers/api-types.generated.ts', 'shared/browser/library.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Errors belong to their domain: no module under shared/<domain>/ imports shared/http/; domain modules throw their
    // own errors (shared/<domain>/errors.ts) and shared/http/error-table.ts maps them. The route table (shared/routes/)
    // is HTTP's own data.
    files: ['shared/*/**/*.ts'],
    ignores: ['shared/http/**', 'shared/routes/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/*'], message: 'A domain module does not import shared/http/: throw an error of the domain\'s errors.ts and map it in shared/http/error-table.ts.' }] }] },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
  // The demo page's script runs in the browser, next to the recommendation library (`Recos`).
  { files: ['infra/local/demo-site/**/*.js'], languageOptions: { sourceType: 'script', globals: { window: 'readonly', document: 'readonly', Recos: 'readonly' } } },
);
