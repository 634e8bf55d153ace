#!/bin/sh
# Builds a release archive and records its sha256 in the editor manifests.
#
#   scripts/release.sh [--version V] [--build-dir build] [--arch x86_64|aarch64] [--out dist]
#                      [--manifests-in DIR] [--no-manifests] [--vsix] [--deb]
#
# Produces <out>/openvaala-<version>-linux-<arch>.tar.gz (arch: x86_64|aarch64; default the
# host's, --arch aarch64 with --build-dir build-aarch64 for scripts/build-aarch64.sh's cross
# build) whose root holds bin/openvaala (from `cmake --install <build-dir>`), the built-in skill,
# README.md and docs/ (under share/), plus <archive>.sha256. The release is Linux only (the code
# uses Linux-only calls: docs/PORTING.md); the manifests list exactly linux-x86_64 and
# linux-aarch64. Unless --no-manifests, writes that sha256 into
# <DIR>/editor-extensions/zed/extension.toml (the target's table) and
# <DIR>/editor-extensions/registry/agent.json (DIR: --manifests-in, default this repository), and
# checks agent.json against the ACP Registry's schema (tests/fixtures/acp-registry/).
# --vsix also packages the platform-specific VS Code extension with the binary in
# bin/linux-<x64|arm64>/; --deb runs CPack's DEB generator.
# The binary must already be built (cmake --build <build-dir>).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)

VERSION=""
BUILD_DIR=build
OUT=dist
ARCH_OPT=""
MANIFEST_ROOT=$ROOT
MANIFESTS=1
VSIX=0
DEB=0
while [ $# -gt 0 ]; do
  case "$1" in
    --version) VERSION=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --arch) ARCH_OPT=$2; shift 2 ;;
    --manifests-in) MANIFEST_ROOT=$(cd "$2" && pwd); shift 2 ;;
    --no-manifests) MANIFESTS=0; shift ;;
    --vsix) VSIX=1; shift ;;
    --deb) DEB=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

if [ -z "$VERSION" ]; then
  VERSION=$(sed -n 's/^project(openvaala VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt | head -n1)
fi
[ -n "$VERSION" ] || { echo "release.sh: cannot determine the version (use --version)" >&2; exit 2; }

[ "$(uname -s)" = Linux ] || { echo "release.sh: OpenVaala builds on Linux only (see docs/PORTING.md)" >&2; exit 2; }
OS=linux
case "${ARCH_OPT:-$(uname -m)}" in
  x86_64|amd64) ARCH=x86_64; VSARCH=x64 ;;
  aarch64|arm64) ARCH=aarch64; VSARCH=arm64 ;;
  *) echo "release.sh: unsupported architecture ${ARCH_OPT:-$(uname -m)} (x86_64 or aarch64)" >&2; exit 2 ;;
esac
case "$(uname -m)" in x86_64|amd64) HOST_ARCH=x86_64 ;; aarch64|arm64) HOST_ARCH=aarch64 ;; *) HOST_ARCH=$(uname -m) ;; esac
STRIP=strip
[ "$ARCH" != "$HOST_ARCH" ] && STRIP=$ARCH-linux-gnu-strip
EXE=openvaala

[ -x "$BUILD_DIR/$EXE" ] || { echo "release.sh: $BUILD_DIR/$EXE is not built (cmake --build $BUILD_DIR)" >&2; exit 1; }
# (a cross build runs only where qemu-user is registered with binfmt: no check otherwise)
BUILT_VERSION=$("$BUILD_DIR/$EXE" --version 2>/dev/null | awk '{print $NF}') || BUILT_VERSION=""
if [ -n "$BUILT_VERSION" ] && [ "$BUILT_VERSION" != "$VERSION" ]; then
  echo "release.sh: warning: the binary says $BUILT_VERSION, releasing as $VERSION" >&2
fi

NAME="openvaala-$VERSION-$OS-$ARCH"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/openvaala-release.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

# the binary (and whatever else the CMake install rules put in place)
cmake --install "$BUILD_DIR" --prefix "$STAGE" >&2
[ -x "$STAGE/bin/$EXE" ] || { mkdir -p "$STAGE/bin"; cp "$BUILD_DIR/$EXE" "$STAGE/bin/"; }
"$STRIP" "$STAGE/bin/$EXE" 2>/dev/null || true
# the built-in skill, unless the install rules already placed it
if [ -d runtime/builtin_skills ] && [ ! -d "$STAGE/share/openvaala/skills" ]; then
  mkdir -p "$STAGE/share/openvaala/skills"
  for d in runtime/builtin_skills/*/; do [ -f "$d/SKILL.md" ] && cp -R "$d" "$STAGE/share/openvaala/skills/"; done
fi
# docs
mkdir -p "$STAGE/share/doc/openvaala"
cp README.md "$STAGE/share/doc/openvaala/"
[ -d docs ] && cp -R docs "$STAGE/share/doc/openvaala/docs"
cp README.md "$STAGE/README.md"

ARCHIVE="$OUT/$NAME.tar.gz"
# archive root = the install prefix: Zed and the ACP Registry run ./bin/openvaala from it
tar -C "$STAGE" -czf "$ARCHIVE" .
if command -v sha256sum >/dev/null 2>&1; then
  SHA=$(sha256sum "$ARCHIVE" | awk '{print $1}')
else
  SHA=$(shasum -a 256 "$ARCHIVE" | awk '{print $1}')
fi
echo "$SHA  $NAME.tar.gz" > "$ARCHIVE.sha256"
echo "release.sh: $ARCHIVE" >&2
echo "release.sh: sha256 $SHA" >&2

if [ "$MANIFESTS" = 1 ]; then
  TARGET="$OS-$ARCH" SHA="$SHA" VERSION="$VERSION" MANIFEST_ROOT="$MANIFEST_ROOT" REPO_ROOT="$ROOT" node - <<'JS'
const fs = require("fs");
const path = require("path");
const { TARGET, SHA, VERSION, MANIFEST_ROOT, REPO_ROOT } = process.env;
process.chdir(MANIFEST_ROOT);
if (!/^[0-9a-f]{64}$/.test(SHA)) throw new Error(`not a sha256: ${SHA}`);
// Zed extension.toml: set sha256 (replacing the placeholder comment or an older value) in the
// [agent_servers.openvaala.targets.<TARGET>] table
const tomlPath = "editor-extensions/zed/extension.toml";
const lines = fs.readFileSync(tomlPath, "utf8").split("\n");
const header = `[agent_servers.openvaala.targets.${TARGET}]`;
const start = lines.findIndex((l) => l.trim() === header);
if (start < 0) throw new Error(`${tomlPath}: no ${header} table`);
let end = lines.findIndex((l, i) => i > start && l.trim().startsWith("["));
if (end < 0) end = lines.length;
const idx = lines.findIndex((l, i) => i > start && i < end && (/^\s*sha256\s*=/.test(l) || /^\s*#\s*sha256/.test(l)));
const line = `sha256 = "${SHA}"`;
if (idx >= 0) lines[idx] = line;
else {
  let at = end;
  while (at > start + 1 && lines[at - 1].trim() === "") at--;
  lines.splice(at, 0, line);
}
fs.writeFileSync(tomlPath, lines.join("\n"));
const vm = /^version = "([^"]+)"/m.exec(lines.join("\n"));
if (vm && vm[1] !== VERSION) console.error(`release.sh: warning: ${tomlPath} has version ${vm[1]}, archive is ${VERSION}`);
// ACP Registry entry
const jsonPath = "editor-extensions/registry/agent.json";
const a = JSON.parse(fs.readFileSync(jsonPath, "utf8"));
const t = a.distribution?.binary?.[TARGET];
if (!t) throw new Error(`${jsonPath}: no distribution.binary["${TARGET}"]`);
t.sha256 = SHA;
if (a.version !== VERSION) console.error(`release.sh: warning: ${jsonPath} has version ${a.version}, archive is ${VERSION}`);
// The ACP Registry's own schema (vendored): refuse to leave an entry the registry would reject.
let Ajv = null;
try {
  Ajv = require(path.join(REPO_ROOT, "node_modules", "ajv"));
} catch {
  console.error("release.sh: warning: no node_modules/ajv (scripts/install-deps.sh): agent.json not checked against the registry schema");
}
if (Ajv) {
  const addFormats = require(path.join(REPO_ROOT, "node_modules", "ajv-formats"));
  const ajv = new (Ajv.default ?? Ajv)({ allErrors: true });
  (addFormats.default ?? addFormats)(ajv, ["uri"]);
  const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "tests", "fixtures", "acp-registry", "agent.schema.json"), "utf8"));
  const validate = ajv.compile(schema);
  if (!validate(a)) throw new Error(`${jsonPath} would not pass the ACP Registry schema: ${ajv.errorsText(validate.errors)}`);
}
fs.writeFileSync(jsonPath, JSON.stringify(a, null, 2) + "\n");
console.error(`release.sh: sha256 recorded for ${TARGET} in ${tomlPath} and ${jsonPath}`);
JS
fi

if [ "$VSIX" = 1 ]; then
  PLATFORM="linux-$VSARCH"
  (
    cd editor-extensions/vscode
    rm -rf bin && mkdir -p "bin/$PLATFORM"
    cp "$STAGE/bin/$EXE" "bin/$PLATFORM/"
    [ -d node_modules ] || npm ci --no-audit --no-fund
    npm run bundle
    npx vsce package --no-dependencies --skip-license --target "$PLATFORM" --out "$OUT/openvaala-vscode-$VERSION-$PLATFORM.vsix"
    rm -rf bin
  )
  echo "release.sh: $OUT/openvaala-vscode-$VERSION-$PLATFORM.vsix" >&2
fi

if [ "$DEB" = 1 ]; then
  (cd "$BUILD_DIR" && cpack -G DEB -B "$OUT")
fi
echo "$ARCHIVE"
