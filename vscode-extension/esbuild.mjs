// Bundles the extension into dist/extension.js and the e2e tests into out/e2e/.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');

await esbuild.build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  outfile: 'dist/extension.js',
  external: ['vscode'],
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
});

const e2eEntries = readdirSync('e2e').filter((f) => f.endsWith('.mts')).map((f) => `e2e/${f}`);
await esbuild.build({
  entryPoints: e2eEntries,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: 'out/e2e',
  outExtension: { '.js': '.mjs' },
  logLevel: 'warning',
});
