#!/bin/sh
# The C++ mutation runner: applies each mutant of tests/mutants/*.txt to a private copy of the tree
# (build-mutate/src), rebuilds in build-mutate/obj and runs the tests until the first failure.
# Not in CI (slow); run it before submitting a change to a module. See docs/TESTING.md.
# Usage: scripts/mutate.sh [--list] [ID|MODULE ...]      (default: every mutant)
# Env:   OPENVAALA_BUILD_LOCK (default /tmp/cxx-build.lock), MUTATE_UNIT_TIMEOUT, MUTATE_ITEST_TIMEOUT (s)
set -eu
cd "$(dirname "$0")/.."
exec python3 scripts/mutate.py "$@"
