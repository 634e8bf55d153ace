#!/bin/sh
# Installs what building and testing need on Debian 12: compilers and libraries from Debian,
# a Node >= 20 (scripts/node-env.sh: the system one, or one from the npm registry in .tools/ when
# the system has none or an older one, such as Debian 12's nodejs 18), and the npm packages of
# the tests and the VS Code extension (into this repo's own node_modules folders).
# openssh-server: the executors tests start a throw-away sshd on 127.0.0.1 (tests/integration/sshd.mjs);
# iproute2 (ss): a fixture tells which process opened a connection (forwarded through sshd or not).
# lld: links openvaala with start-up's functions first (CMakeLists.txt, OPENVAALA_STARTUP_ORDER).
set -eu
cd "$(dirname "$0")/.."

PKGS="build-essential cmake pkg-config git nodejs npm clang
libboost1.81-all-dev libboost-json1.81-dev libboost-url1.81-dev
libyaml-cpp-dev libspdlog-dev libre2-dev libssl-dev ca-certificates openssl
libgtest-dev libgmock-dev libbenchmark-dev
openssh-client openssh-server iproute2 lld"

missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# node/npm may come from elsewhere than Debian: only install them when absent. Debian's (Node 18)
# serve only to fetch a supported Node into .tools/ (scripts/node-env.sh), so they are not needed
# once that is there.
if [ -x .tools/bin/node ] && [ -x .tools/bin/npm ]; then
  missing=$(echo "$missing" | sed 's/ nodejs//; s/ npm//')
fi
command -v node >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ nodejs//')
command -v npm >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ npm//')
if [ -n "$(echo "$missing" | tr -d ' ')" ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "install-deps: apt-get install$missing" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >&2
fi

# A Node the tests and the extension support, first on PATH for npm below (and its scripts).
. scripts/node-env.sh

if [ ! -d node_modules/@agentclientprotocol/sdk ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci" >&2
  npm ci --no-audit --no-fund >&2
fi
if [ -f editor-extensions/vscode/package-lock.json ] && { [ ! -d editor-extensions/vscode/node_modules ] ||
     [ editor-extensions/vscode/package-lock.json -nt editor-extensions/vscode/node_modules/.package-lock.json ]; }; then
  echo "install-deps: npm ci (VS Code extension)" >&2
  (cd editor-extensions/vscode && npm ci --no-audit --no-fund >&2)
fi
