#!/bin/sh
# Mutation testing of the VS Code extension (Stryker; not in CI, takes long): see docs/TESTING.md.
# Extra arguments go to `stryker run`, e.g. scripts/mutate-vscode.sh --concurrency 2 --incremental
cd "$(dirname "$0")/../editor-extensions/vscode" && exec npm run mutate -- "$@"
