#!/bin/sh
# Builds everything and runs every test: unit tests, integration tests (ACP SDK client against
# build/openvaala and the fake model), and the editor extensions' tests.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j2
if [ -f editor-extensions/vscode/package.json ]; then
  (cd editor-extensions/vscode && npm test)
fi
