#!/bin/sh
# The main job, end to end on this machine with no network: installs, builds, then an ACP client
# (the official TypeScript SDK) drives `openvaala acp` in a copy of examples/workspace against the
# bundled fake model server, and prints the transcript.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/node-env.sh   # Node >= 20 first on PATH (for ctest's integration entry and npm too)
scripts/build.sh
exec node scripts/demo.mjs "$@"
