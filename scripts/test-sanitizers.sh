#!/bin/sh
# Builds the `asan` preset (AddressSanitizer + UndefinedBehaviorSanitizer, build-asan/) and runs
# every unit test and the integration suite against that binary. On demand, not in CI: on two
# cores the build alone takes longer than the rest of CI. Timings are in docs/TESTING.md.
set -eu
cd "$(dirname "$0")/.."
. scripts/node-env.sh
cmake --preset asan >&2
if [ -n "${OPENVAALA_BUILD_LOCK:-}" ]; then
  flock "$OPENVAALA_BUILD_LOCK" cmake --build --preset asan -j"$(nproc)" >&2
else
  cmake --build --preset asan -j"$(nproc)" >&2
fi
exec ctest --preset asan -j"$(nproc)" "$@"
