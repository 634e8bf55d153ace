#!/bin/sh
# Builds everything and runs every test: unit tests, integration tests (ACP SDK client against
# build/openvaala and the fake model), and the editor extensions' tests.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# podman (runc, cgroupfs) and a test image built from a local debootstrap root, for the container
# executor tests; cached in .tools/podman/ (a couple of minutes once, half a second after).
scripts/podman-test-env.sh >/dev/null
. scripts/node-env.sh   # Node >= 20 first on PATH (for ctest's integration entry and npm too)
scripts/build.sh
ctest --test-dir build --output-on-failure -j2
if [ -f editor-extensions/vscode/package.json ]; then
  # Type check, the extension's tests against build/openvaala, and the .vsix CI ships.
  (cd editor-extensions/vscode && npm run typecheck && npm test && npm run package)
fi
