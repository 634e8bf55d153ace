#!/bin/sh
# Runs the Node.js integration tests (official ACP SDK client driving build/openvaala, fake model server).
# Usage: scripts/run-integration.sh [test files...]   (default: tests/integration/*.test.mjs)
# Env:   OPENVAALA_BIN=path/to/openvaala (default build/openvaala)
#        OPENVAALA_TEST_STDERR=1 to echo the agent's stderr; OPENVAALA_KEEP_TMP=1 to keep temp dirs
#        OPENVAALA_TEST_JOBS=N files at once (default 2: the files are isolated from each other;
#        ctest runs one file per entry instead, `ctest -L e2e -j2`)
set -eu
cd "$(dirname "$0")/.."
. scripts/node-env.sh   # Node >= 20 first on PATH (the system one or .tools/bin)
if [ ! -d node_modules/@agentclientprotocol/sdk ]; then
  echo "run-integration: installing npm devDependencies (npm ci)" >&2
  npm ci --no-audit --no-fund >&2
fi
if [ "$#" -eq 0 ]; then
  set -- tests/integration/*.test.mjs
fi
BIN="${OPENVAALA_BIN:-build/openvaala}"
if [ ! -x "$BIN" ]; then
  echo "run-integration: $BIN not found or not executable: agent tests will be skipped (build it or set OPENVAALA_BIN)" >&2
fi
exec node --test --test-concurrency="${OPENVAALA_TEST_JOBS:-2}" "$@"
