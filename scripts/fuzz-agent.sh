#!/bin/sh
# Fuzzes the whole agent behind its ACP connection (tests/fuzz/agent_fuzz.cpp): builds the runtime
# with clang, AddressSanitizer and coverage instrumentation in build-fuzz/, then runs libFuzzer
# from the seed scripts in tests/fuzz/corpus/agent. On demand, not in CI. See docs/TESTING.md.
#
# Usage: scripts/fuzz-agent.sh [libFuzzer flags...]     (default: -runs=10000000)
# Env:   FUZZ_WORK (default /dev/shm/openvaala-agent-fuzz, a tmpfs): corpus, world and crash files go there.
#        OPENVAALA_BUILD_LOCK (default /tmp/cxx-build.lock).
#
# The fuzzed scripts make the agent write files (apply_patch, with fuzzed paths and permission
# answers), so when started as root the fuzzer runs as `nobody`: it can write only its own folder.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
work=${FUZZ_WORK:-/dev/shm/openvaala-agent-fuzz}
lock=${OPENVAALA_BUILD_LOCK:-/tmp/cxx-build.lock}

if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address -fsanitize-coverage-ignorelist=$root/tests/fuzz/coverage-ignore.txt" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address -fuse-ld=lld" \
    -DOPENVAALA_STATIC_RUNTIME=OFF -DOPENVAALA_STATIC_DEPS=OFF -DOPENVAALA_BUILD_FUZZERS=ON >&2
fi
flock "$lock" cmake --build build-fuzz --target agent_fuzz -j"$(nproc)" >&2

mkdir -p "$work/corpus" "$work/world" "$work/artifacts"
cp -n tests/fuzz/corpus/agent/* "$work/corpus/"
[ $# -gt 0 ] || set -- -runs=10000000
run_as=""
if [ "$(id -u)" = 0 ]; then
  chown -R nobody:nogroup "$work"
  run_as="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
fi
cd "$work"
exec env OPENVAALA_FUZZ_DIR="$work/world" ASAN_OPTIONS="abort_on_error=1" \
  $run_as "$root/build-fuzz/tests/fuzz/agent_fuzz" -dict="$root/tests/fuzz/agent.dict" \
  -artifact_prefix="$work/artifacts/" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 "$@" "$work/corpus"
