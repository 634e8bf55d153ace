#!/bin/sh
# Proves the README's set-up on a clean Debian 12: debootstraps a minimal bookworm root, gives it
# this machine's network set-up (DNS, apt sources and proxy settings, CA certificates, npm config,
# proxy variables) and nothing else, clones this repository into it and runs, as root inside,
# the README's two commands: scripts/demo.sh, then scripts/test.sh. Prints how long each took.
#
# Usage (as root, on Debian): scripts/debian-clean-check.sh [ROOT_DIR] [GIT_REF]
#   ROOT_DIR  where the bookworm root goes (default /srv/openvaala-bookworm); an existing one is
#             reused as it is (remove it for a clean run, or set FRESH=1)
#   GIT_REF   the commit to test (default HEAD of this checkout)
# Env: DEBIAN_MIRROR (default http://deb.debian.org/debian), FRESH=1 to debootstrap anew,
#      OPENVAALA_BUILD_LOCK (default /tmp/cxx-build.lock when it exists): the C++ build holds
#      flock on it (bind-mounted into the root) so that builds sharing the machine's cores queue;
#      STEPS="demo test" (default; e.g. STEPS=test), KEEP_CLONE=1 to move the root's existing
#      clone to GIT_REF (keeping its build/, node_modules/ and .tools/) instead of a fresh clone.
# Logs: ROOT_DIR/root/check-logs/{demo,test}.log (and the run's summary on stdout).
set -eu
[ "$(id -u)" -eq 0 ] || { echo "debian-clean-check: run as root (debootstrap, chroot)" >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${1:-/srv/openvaala-bookworm}
REF=$(git -C "$REPO" rev-parse "${2:-HEAD}")
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
LOCK=${OPENVAALA_BUILD_LOCK:-}
[ -z "$LOCK" ] && [ -e /tmp/cxx-build.lock ] && LOCK=/tmp/cxx-build.lock

command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq debootstrap; }

if [ "${FRESH:-0}" = 1 ] && [ -d "$ROOT" ]; then
  rm -rf --one-file-system "$ROOT"
fi
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  echo "== debootstrap bookworm (minbase) into $ROOT" >&2
  t0=$(date +%s)
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >&2
  echo "== debootstrap: $(( $(date +%s) - t0 )) s" >&2
fi

cleanup() {
  for m in "$ROOT/tmp/cxx-build.lock" "$ROOT/dev/pts" "$ROOT/dev" "$ROOT/proc" "$ROOT/sys/fs/cgroup" "$ROOT/sys" "$ROOT"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m"
  done
  return 0
}
trap cleanup EXIT INT TERM

# This machine's network set-up, nothing more: DNS, apt sources/proxy, CA certificates, npm
# config (its user and global npmrc, merged into root's), proxy variables (passed below).
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1 || [ -s /etc/apt/sources.list ]; then
  rm -f "$ROOT/etc/apt/sources.list"
  [ -s /etc/apt/sources.list ] && cp /etc/apt/sources.list "$ROOT/etc/apt/"
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && cp "$f" "$ROOT/etc/apt/sources.list.d/"
  done
fi
for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
  [ -f "$f" ] && grep -qiE 'proxy|Check-Valid-Until|Check-Date' "$f" && cp "$f" "$ROOT$f"
done
mkdir -p "$ROOT/usr/local/share/ca-certificates" "$ROOT/etc/ssl/certs"
cp -r /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/" 2>/dev/null || true
# The bundle too, so that anything before Debian's ca-certificates is installed trusts them;
# installing it (scripts/install-deps.sh does) rebuilds the bundle from the same files.
cp -L /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
: > "$ROOT/root/.npmrc"
for f in "${HOME:-/root}/.npmrc" /etc/npmrc /usr/etc/npmrc /usr/local/etc/npmrc; do
  [ -f "$f" ] && cat "$f" >> "$ROOT/root/.npmrc" && echo >> "$ROOT/root/.npmrc"
done
chmod 600 "$ROOT/root/.npmrc"

# The root's "/" is a mount point, as on a real machine: podman's storage remounts "/" private
# while it unpacks an image layer ("remount /, flags: 0x44000: invalid argument" otherwise).
mountpoint -q "$ROOT" || mount --bind "$ROOT" "$ROOT"
mount --make-rprivate "$ROOT"
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
mountpoint -q "$ROOT/sys" || mount -t sysfs sys "$ROOT/sys"
# A real machine has its cgroups mounted (podman, for the container executor tests, needs them).
if mountpoint -q /sys/fs/cgroup && ! mountpoint -q "$ROOT/sys/fs/cgroup"; then
  mount --rbind /sys/fs/cgroup "$ROOT/sys/fs/cgroup"
fi
mountpoint -q "$ROOT/dev" || mount --bind /dev "$ROOT/dev"
mountpoint -q "$ROOT/dev/pts" || mount --bind /dev/pts "$ROOT/dev/pts"
LOCK_IN=""
if [ -n "$LOCK" ]; then
  touch "$LOCK" "$ROOT/tmp/cxx-build.lock"
  mountpoint -q "$ROOT/tmp/cxx-build.lock" || mount --bind "$LOCK" "$ROOT/tmp/cxx-build.lock"
  LOCK_IN=/tmp/cxx-build.lock
fi

# The repository at REF, as a fresh clone (no build/, node_modules/ or .tools/ of this checkout).
if [ "${KEEP_CLONE:-0}" = 1 ] && [ -d "$ROOT/root/openvaala/.git" ]; then
  git -C "$ROOT/root/openvaala" fetch -q "$REPO" "$REF"
  git -C "$ROOT/root/openvaala" checkout -q "$REF"
else
  rm -rf "$ROOT/root/openvaala" "$ROOT/root/check-logs"
  git clone -q --no-local "$REPO" "$ROOT/root/openvaala"
  git -C "$ROOT/root/openvaala" checkout -q "$REF"
fi
mkdir -p "$ROOT/root/check-logs"

run_in_root() { # name, command
  t0=$(date +%s)
  set +e
  env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      OPENVAALA_BUILD_LOCK="$LOCK_IN" OPENVAALA_IN_CHROOT=1 \
      ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
      ${no_proxy:+no_proxy=$no_proxy} ${HTTP_PROXY:+HTTP_PROXY=$HTTP_PROXY} \
      ${HTTPS_PROXY:+HTTPS_PROXY=$HTTPS_PROXY} ${NO_PROXY:+NO_PROXY=$NO_PROXY} \
      chroot "$ROOT" sh -c "cd /root/openvaala && $2" > "$ROOT/root/check-logs/$1.log" 2>&1 < /dev/null
  rc=$?
  set -e
  echo "== $2: exit $rc, $(( $(date +%s) - t0 )) s (log: $ROOT/root/check-logs/$1.log)"
  return $rc
}

echo "== commit $REF; system node in the root before: $(chroot "$ROOT" sh -c 'command -v node && node --version' || echo none)"
status=0
for step in ${STEPS:-demo test}; do
  run_in_root "$step" "scripts/$step.sh" || status=1
done
echo "== node in the root after: system $(chroot "$ROOT" sh -c 'node --version 2>/dev/null' || echo none)," \
     "repo-local $(chroot "$ROOT" sh -c '/root/openvaala/.tools/bin/node --version 2>/dev/null' || echo none)"
# The runners' closing lines, for the record.
grep -E '^# (tests|pass|fail|skipped)|tests passed|tests failed|passing|failing' "$ROOT/root/check-logs/test.log" | tail -20 || true
exit $status
