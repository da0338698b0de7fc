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
    // In lib/, functions/ and scripts/ only the composition root (lib/app.ts) reads process.env, and
    // lib/telemetry/preload.ts, which reads the telemetry settings before the composition root loads (it must run
    // first). Scripts take their settings from lib/app.ts configFromEnvironment(). The local host, the benchmarks
    // and the tests are not the service and may read the environment.
    files: ['lib/app.ts', 'lib/telemetry/preload.ts', 'local/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
