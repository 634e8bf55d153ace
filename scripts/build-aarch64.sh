#!/bin/sh
# Cross-builds openvaala and its unit tests for linux-aarch64 into build-aarch64/ on a Debian 12
# x86_64 machine: Debian's g++-aarch64-linux-gnu, the :arm64 (multiarch) -dev packages of the
# libraries scripts/install-deps.sh installs, and cmake/aarch64-linux-gnu.toolchain.cmake.
# scripts/test-aarch64.sh runs the unit tests under qemu-user; scripts/release.sh --arch aarch64
# --build-dir build-aarch64 packs the release archive.
#
#   scripts/build-aarch64.sh [cmake --build options, e.g. --target openvaala]
# Env: BUILD_DIR (default build-aarch64); OPENVAALA_BUILD_LOCK=<file> to hold flock on it while
# compiling (machines whose cores are shared); CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache).
#
# Caution: Debian 12's libyaml-cpp-dev is not multiarch-co-installable, so installing the :arm64
# one removes the amd64 one and the native build stops configuring. This script puts the amd64
# package back when it exits (pass KEEP_ARM64_YAML=1 to skip that).
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-aarch64}
restore_native_yaml() {
  [ "${KEEP_ARM64_YAML:-}" = 1 ] && return 0
  if ! dpkg-query -W -f='${Status}' libyaml-cpp-dev:amd64 2>/dev/null | grep -q "install ok installed"; then
    echo "build-aarch64: putting back libyaml-cpp-dev:amd64 for the native build" >&2
    S=""; [ "$(id -u)" -ne 0 ] && S="sudo"
    DEBIAN_FRONTEND=noninteractive $S apt-get install -y -qq libyaml-cpp-dev:amd64 >&2 || true
  fi
}
trap restore_native_yaml EXIT

PKGS="g++-aarch64-linux-gnu qemu-user-static cmake pkg-config
libboost1.81-dev:arm64 libboost-json1.81-dev:arm64 libboost-url1.81-dev:arm64
libspdlog-dev:arm64 libre2-dev:arm64 libssl-dev:arm64
libgtest-dev:arm64 libgmock-dev:arm64"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "build-aarch64: apt-get install$missing" >&2
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
fi

# libyaml-cpp-dev is not Multi-Arch: same in Debian 12: installing its :arm64 package removes the
# amd64 one (and the native build with it). So it is only unpacked, with its runtime library,
# into a private sysroot in the build directory; the other -dev packages coexist.
SYSROOT="$(pwd)/$BUILD_DIR/sysroot"
if [ ! -f "$SYSROOT/usr/lib/aarch64-linux-gnu/libyaml-cpp.a" ]; then
  mkdir -p "$BUILD_DIR/debs" "$SYSROOT"
  (cd "$BUILD_DIR/debs" && apt-get download libyaml-cpp-dev:arm64 libyaml-cpp0.7:arm64 >&2)
  for deb in "$BUILD_DIR"/debs/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
fi

cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_TOOLCHAIN_FILE="$(pwd)/cmake/aarch64-linux-gnu.toolchain.cmake" \
      -DCMAKE_PREFIX_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu/cmake" \
      -DCMAKE_LIBRARY_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu" \
      ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >&2
[ "$#" -eq 0 ] && set -- --target openvaala acp_tests bridge_tests runtime_tests
if [ -n "${OPENVAALA_BUILD_LOCK:-}" ]; then
  flock "$OPENVAALA_BUILD_LOCK" cmake --build "$BUILD_DIR" -j"$(nproc)" "$@" >&2
else
  cmake --build "$BUILD_DIR" -j"$(nproc)" "$@" >&2
fi
file "$BUILD_DIR/openvaala" >&2 || true
