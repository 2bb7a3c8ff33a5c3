#!/usr/bin/env bash
# End-to-end tests in a real VS Code (code-server + headless Chromium + Playwright) with the
# real greenloop daemon, the real sandbox and the scripted model server.
# Screenshots (and logs of failures) go to artifacts/e2e/ at the repository root.
# GREENLOOP_E2E_SANDBOX=docker runs the sandbox in Docker (default: local, faster).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node esbuild.mjs --production
npx vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links --out dist/greenloop.vsix >/dev/null
RUN_DIR="$PWD/.e2e-cache/run"
rm -rf "$RUN_DIR" && mkdir -p "$RUN_DIR"
rm -rf ../artifacts/e2e && mkdir -p ../artifacts/e2e
export GREENLOOP_E2E_TMP="$RUN_DIR"
node --test --test-concurrency=1 out/e2e/activation.test.mjs out/e2e/scenarios.test.mjs out/e2e/testing.test.mjs
