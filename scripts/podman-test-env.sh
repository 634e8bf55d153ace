#!/bin/sh
# Sets up podman for the tests that run commands in a container, and prints the environment that
# points podman at this set-up:   eval "$(scripts/podman-test-env.sh)"
# Only `export ...` lines go to stdout; every log goes to stderr. Idempotent: a second run only
# checks (about 0.5 s on a busy machine); concurrent runs wait for each other (flock on
# .tools/podman/.lock).
#
# (a) Debian packages, with --no-install-recommends (enough as root, see below):
#     podman, runc (the runtime we pin), debootstrap (builds the image's root file system),
#     catatonit (the init of `podman run --init`: reaps orphaned processes, which `sleep infinity`
#     as PID 1 does not, and passes SIGTERM on, so `podman rm -f` does not wait 10 s). Pass
#     --init to `podman run`: podman 4.3 ignores containers.conf's `init = true`.
#     Not needed as root: netavark/aardvark-dns (podman 4.3 falls back to CNI from
#     containernetworking-plugins), slirp4netns/uidmap/fuse-overlayfs (rootless only), buildah.
# (b) .tools/podman/containers.conf (CONTAINERS_CONF), gitignored like all of .tools/:
#     runtime = "runc"          the runtime tested here (crun is not installed);
#     cgroup_manager = cgroupfs no systemd as PID 1 here (and cgroups v1), so no systemd manager;
#     events_logger = "file"    journald is not there; the log goes to tmp_dir/events;
#     tmp_dir                   podman's state of running containers (exit codes, alive file) in
#                               this folder, not mixed with a system-wide podman's /run/libpod;
#     default_ulimits           low, fixed limits so the tests do not depend on the host's (note:
#                               nproc counts per host uid, as there is no user namespace).
#     .tools/podman/storage.conf (CONTAINERS_STORAGE_CONF): images and containers in
#     .tools/podman/storage (graphroot) and .tools/podman/run (runroot), not /var/lib/containers,
#     so the tests see only their own containers and `rm -rf .tools/podman` resets everything
#     (remove the containers first). Driver overlay: works here as root on ext4 (vfs too, but it
#     copies the whole root file system at every `podman run`: 1.2 s instead of 0.7 s).
#     run/ and tmp/ stand where a tmpfs would be (/run is not one here): they are emptied when the
#     boot id changes, as a reboot would. Moving the repository needs `rm -rf .tools/podman/storage
#     .tools/podman/run .tools/podman/tmp` (podman's database records these paths).
# (c) Image localhost/openvaala-test:1, when `podman image exists` says it is missing: a Debian 12
#     (bookworm, as the host, so binaries built here run in it) debootstrap --variant=minbase root
#     file system (bash, coreutils, passwd's useradd; no procps: no ps, no /bin/kill) from the
#     Debian mirror of /etc/apt/sources.list*, tarred to .tools/podman/rootfs.tar (cache: about 2
#     min to build, 120 MB), then `podman import`ed (about 4 s).
# Tested as root. Rootless podman would also need uidmap, /etc/subuid entries and fuse-overlayfs.
# Env: OPENVAALA_DEBIAN_MIRROR overrides the mirror.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIR="$ROOT/.tools/podman"
IMAGE=localhost/openvaala-test:1
SUITE=bookworm

log() { echo "podman-test-env: $*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
  log "warning: not root; this set-up is tested with root podman only"
fi

# (a) packages
missing=""
for p in podman runc debootstrap catatonit; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  log "apt-get install --no-install-recommends$missing"
  $SUDO apt-get update -qq >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
fi

mkdir -p "$DIR"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$DIR/.lock"
  flock 9
fi

# Writes stdin to $1 only when it differs (an unchanged file keeps its date).
write_if_changed() {
  cat > "$1.new"
  if cmp -s "$1.new" "$1"; then rm -f "$1.new"; else mv -f "$1.new" "$1"; log "wrote $1"; fi
}

# (b) configuration
write_if_changed "$DIR/containers.conf" <<EOF
# Written by scripts/podman-test-env.sh (see there why each setting is here).
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$DIR/tmp"

[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
EOF
write_if_changed "$DIR/storage.conf" <<EOF
# Written by scripts/podman-test-env.sh (see there why each setting is here).
[storage]
driver = "overlay"
graphroot = "$DIR/storage"
runroot = "$DIR/run"
EOF
CONTAINERS_CONF="$DIR/containers.conf"
CONTAINERS_STORAGE_CONF="$DIR/storage.conf"
export CONTAINERS_CONF CONTAINERS_STORAGE_CONF

# After a reboot, forget the run-time state, as a tmpfs would (/run is on disk here).
boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
if [ "$(cat "$DIR/boot_id" 2>/dev/null || true)" != "$boot_id" ]; then
  if [ -d "$DIR/run" ] || [ -d "$DIR/tmp" ]; then
    log "new boot: emptying $DIR/run and $DIR/tmp"
    $SUDO rm -rf --one-file-system "$DIR/run" "$DIR/tmp"
  fi
  echo "$boot_id" > "$DIR/boot_id"
fi

# (c) image
if ! podman image exists "$IMAGE"; then
  if [ ! -s "$DIR/rootfs.tar" ]; then
    mirror=${OPENVAALA_DEBIAN_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
      /etc/apt/sources.list.d/*.sources 2>/dev/null |
      sed -n 's,^\(deb\|URIs:\)[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(https\?://[^[:space:]]*/debian\)/\?\([[:space:]].*\)\?$,\3,p' |
      head -n 1)}
    mirror=${mirror:-http://deb.debian.org/debian}
    fs="$DIR/rootfs.build"
    # An interrupted debootstrap may leave proc/sys mounted in $fs.
    for m in $(awk -v d="$fs/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
      $SUDO umount -l "$m" || true
    done
    $SUDO rm -rf --one-file-system "$fs"
    log "debootstrap --variant=minbase $SUITE from $mirror (a couple of minutes)"
    $SUDO debootstrap --variant=minbase "$SUITE" "$fs" "$mirror" >&2
    # apt's downloaded packages and lists: not needed in the image (`apt-get update` brings lists).
    $SUDO find "$fs/var/cache/apt/archives" "$fs/var/lib/apt/lists" -maxdepth 1 -type f \
      ! -name lock -delete
    $SUDO rm -f "$fs"/var/cache/apt/*.bin
    $SUDO tar -C "$fs" --numeric-owner -cf "$DIR/rootfs.tar.new" .
    $SUDO mv -f "$DIR/rootfs.tar.new" "$DIR/rootfs.tar"
    $SUDO rm -rf --one-file-system "$fs"
  fi
  log "podman import $DIR/rootfs.tar $IMAGE"
  podman import -q "$DIR/rootfs.tar" "$IMAGE" >&2
fi

# (d) environment for the caller
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
echo "export CONTAINERS_CONF=$(q "$CONTAINERS_CONF")"
echo "export CONTAINERS_STORAGE_CONF=$(q "$CONTAINERS_STORAGE_CONF")"
