# Sourced (`. scripts/node-env.sh`) from the repository root by the scripts that run Node: puts a
# Node that the tests and the VS Code extension support (>= 20) first on PATH, and exports PATH.
#
# - .tools/bin/node (installed by an earlier run) is used when present and new enough;
# - else the system `node` when it is new enough;
# - else (no node, or Debian 12's nodejs 18) Node $OPENVAALA_NODE_VERSION and npm are installed
#   from the npm registry (packages node-linux-<arch> and npm) into .tools/ (gitignored), with the
#   npm found on the system (scripts/install-deps.sh installs Debian's when there is none).
# Only npm's registry is used: no other download.
# Env: OPENVAALA_NODE_VERSION (default 22: the acpx client needs 22, the tests and extension 20).

OPENVAALA_NODE_MIN=20
: "${OPENVAALA_NODE_VERSION:=22}"

# Prints the major version of the node at $1 (a path or a command name), or 0.
openvaala_node_major() {
  "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

openvaala_node_env() {
  _ov_tools="$(pwd)/.tools"
  if [ -x "$_ov_tools/bin/node" ] &&
     [ "$(openvaala_node_major "$_ov_tools/bin/node")" -ge "$OPENVAALA_NODE_MIN" ]; then
    PATH="$_ov_tools/bin:$PATH"; export PATH
    return 0
  fi
  if command -v node >/dev/null 2>&1 &&
     [ "$(openvaala_node_major node)" -ge "$OPENVAALA_NODE_MIN" ]; then
    return 0
  fi
  case "$(uname -m)" in
    x86_64) _ov_arch=x64 ;;
    aarch64|arm64) _ov_arch=arm64 ;;
    *) echo "node-env: no Node >= $OPENVAALA_NODE_MIN here and no npm package for $(uname -m)" >&2
       return 1 ;;
  esac
  if ! command -v npm >/dev/null 2>&1; then
    echo "node-env: Node >= $OPENVAALA_NODE_MIN needed, and npm to fetch it: run scripts/install-deps.sh" >&2
    return 1
  fi
  echo "node-env: system node is $(command -v node >/dev/null 2>&1 && node --version || echo absent);" \
       "installing Node $OPENVAALA_NODE_VERSION from the npm registry into .tools/" >&2
  mkdir -p "$_ov_tools/bin"
  # --no-save with a private prefix: nothing in the repository's package files changes.
  npm install --prefix "$_ov_tools" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-$_ov_arch@$OPENVAALA_NODE_VERSION" "npm@$(openvaala_npm_for_node "$OPENVAALA_NODE_VERSION")" >&2 || return 1
  ln -sf "../node_modules/node-linux-$_ov_arch/bin/node" "$_ov_tools/bin/node"
  ln -sf ../node_modules/npm/bin/npm-cli.js "$_ov_tools/bin/npm"
  ln -sf ../node_modules/npm/bin/npx-cli.js "$_ov_tools/bin/npx"
  PATH="$_ov_tools/bin:$PATH"; export PATH
  _ov_major=$(openvaala_node_major "$_ov_tools/bin/node")
  if [ "$_ov_major" -lt "$OPENVAALA_NODE_MIN" ]; then
    echo "node-env: the Node installed into .tools/ does not run (major '$_ov_major')" >&2
    return 1
  fi
  echo "node-env: using $(node --version) from .tools/bin, npm $(npm --version)" >&2
}

# The npm major that goes with a Node major (the one Node's own release bundles).
openvaala_npm_for_node() {
  case "$1" in
    20*) echo 10 ;;
    22*) echo 10 ;;
    *) echo 11 ;;
  esac
}

openvaala_node_env
