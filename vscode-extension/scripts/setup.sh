#!/usr/bin/env bash
# Set-up of the extension's toolchain on a fresh Debian machine; safe to run again.
#  1. Debian packages the end-to-end tests need (chromium, native build tools) when missing.
#  2. The extension's npm dependencies (`npm ci` from package-lock.json).
#  3. code-server 4.99.4 (a real VS Code, offline) in .e2e-cache/code-server.
# Set GREENLOOP_E2E=0 to skip 1 and 3 (lint/unit/package only).
set -euo pipefail
cd "$(dirname "$0")/.."
EXT=$PWD
CACHE="$EXT/.e2e-cache"
CODE_SERVER_VERSION=4.99.4
RIPGREP_CACHE=vscode-ripgrep-cache-1.15.11
RIPGREP_ARCHIVE=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
log() { printf '\033[1m[extension setup]\033[0m %s\n' "$*"; }
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

# 1. Debian packages -----------------------------------------------------------
if [ "${GREENLOOP_E2E:-1}" = 1 ]; then
  APT_PKGS=(chromium ripgrep build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)
  missing=()
  for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt: installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# 2. The extension's dependencies (re-installed only when the lock file changed) --
mkdir -p "$CACHE"
LOCK_SUM=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$CACHE/npm-ci.sum" 2>/dev/null)" != "$LOCK_SUM" ]; then
  log "npm ci"
  npm ci --no-fund --no-audit --loglevel=error
  echo "$LOCK_SUM" >"$CACHE/npm-ci.sum"
fi

# 3. code-server, with the native modules built against this Node ---------------
if [ "${GREENLOOP_E2E:-1}" = 1 ]; then
  CS_DIR="$CACHE/code-server"
  CS_PKG="$CS_DIR/node_modules/code-server/package.json"
  have=$(node -p "require('$CS_PKG').version" 2>/dev/null || true)
  if [ "$have" != "$CODE_SERVER_VERSION" ] || ! ls "$CS_DIR"/node_modules/argon2/lib/binding/*/argon2.node >/dev/null 2>&1; then
    log "code-server $CODE_SERVER_VERSION: npm install (native builds, about a minute)"
    mkdir -p "$CS_DIR" "$CACHE/tmp/$RIPGREP_CACHE"
    # @vscode/ripgrep's postinstall downloads rg; it takes this archive from its cache first.
    tar czf "$CACHE/tmp/$RIPGREP_CACHE/$RIPGREP_ARCHIVE" -C "$(dirname "$(command -v rg)")" rg
    printf '{ "name": "greenloop-e2e-code-server", "private": true, "version": "0.0.0" }\n' >"$CS_DIR/package.json"
    # Root needs --unsafe-perm; node-gyp uses this Node's headers; a postinstall runs `npx node-gyp`.
    # npm 11 blocks dependency install scripts unless allowed; code-server's native modules need them.
    (cd "$CS_DIR" && TMPDIR="$CACHE/tmp" npm_config_nodedir=/usr npm_config_yes=true \
      npm install --unsafe-perm --dangerously-allow-all-scripts --no-fund --no-audit --loglevel=error \
      "code-server@$CODE_SERVER_VERSION")
  fi
fi
log "ready"
