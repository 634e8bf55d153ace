#!/bin/sh
# Configures and builds build/openvaala and the tests.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
# OPENVAALA_BUILD_LOCK=<file>: hold flock on that file while compiling (machines that share cores).
if [ -n "${OPENVAALA_BUILD_LOCK:-}" ]; then
  flock "$OPENVAALA_BUILD_LOCK" cmake --build build -j"$(nproc)" >&2
else
  cmake --build build -j"$(nproc)" >&2
fi
