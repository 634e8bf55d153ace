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

# FUZZ_ASAN=0: a coverage-only build (build-fuzz-cov/, -O2) for long runs, several times faster;
# replay its corpus under the ASan build afterwards (scripts/fuzz-agent.sh -runs=0 <corpus>).
if [ "${FUZZ_ASAN:-1}" = 0 ]; then
  build=build-fuzz-cov sanitize=fuzzer-no-link opt="-O2 -gline-tables-only" link_sanitize="" asan=OFF
else
  build=build-fuzz sanitize=fuzzer-no-link,address opt="-O1 -g" link_sanitize=-fsanitize=address asan=ON
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="$opt -fno-omit-frame-pointer -fsanitize=$sanitize -fsanitize-coverage-ignorelist=$root/tests/fuzz/coverage-ignore.txt" \
    -DCMAKE_EXE_LINKER_FLAGS="$link_sanitize -fuse-ld=lld" -DOPENVAALA_FUZZ_ASAN=$asan \
    -DOPENVAALA_STATIC_RUNTIME=OFF -DOPENVAALA_STATIC_DEPS=OFF -DOPENVAALA_BUILD_FUZZERS=ON >&2
fi
flock "$lock" cmake --build "$build" --target agent_fuzz -j"$(nproc)" >&2
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

rm -rf "$work/world"  # the worlds of earlier runs (one folder a fuzzing process)
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
  $run_as "$root/$build/tests/fuzz/agent_fuzz" -dict="$root/tests/fuzz/agent.dict" \
  -artifact_prefix="$work/artifacts/" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 "$@" "$work/corpus"
