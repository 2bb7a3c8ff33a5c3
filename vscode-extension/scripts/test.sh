#!/usr/bin/env bash
# The extension's checks: settings and protocol.ts mirror the server, eslint, tsc, vitest unit tests,
# the esbuild bundle and the .vsix (dist/greenloop.vsix).
set -euo pipefail
cd "$(dirname "$0")/.."
GREENLOOP_E2E=0 bash scripts/setup.sh
echo "== settings mirror server/greenloop/settings.py"; node scripts/sync-settings.mjs --check
echo "== protocol.ts mirrors server/greenloop/lsp/protocol.py"; npm run --silent sync-protocol -- --check
echo "== eslint"; npx eslint src test e2e scripts esbuild.mjs eslint.config.mjs
echo "== tsc"; npx tsc --noEmit -p .
echo "== vitest"; npx vitest run
echo "== esbuild"; node esbuild.mjs --production
echo "== vsce package"; npx vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links --out dist/greenloop.vsix
