// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read settings through lib/config (loadConfig) in the composition root only.',
        },
      ],
    },
  },
  {
    // lib/telemetry/preload.ts reads the telemetry settings before the composition root loads (it must run first)
    files: ['lib/app.ts', 'lib/telemetry/preload.ts', 'local/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
