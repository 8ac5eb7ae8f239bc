#!/usr/bin/env bash
# Build the default model base image without any registry: Debian bookworm (Python 3.11) from
# Debian's own packages via debootstrap, imported with `docker import`.
#   scripts/build_base_image.sh [TAG]     (DEBIAN_MIRROR overrides the mirror)
set -euo pipefail
tag="${1:-asrbench/base:bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
command -v debootstrap >/dev/null || { echo "debootstrap not found: apt-get install debootstrap" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "debootstrap needs root: run as root or use a public base image (BASE_IMAGE build arg)" >&2; exit 2; }
root="$(mktemp -d /tmp/asrbench-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,libgomp1 \
  bookworm "$root" "$mirror" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; exit 1; }
rm -f "$root.log"
# Smaller and reproducible-ish: no apt lists or caches in the image.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
tar -C "$root" -c . | docker import \
  -c 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "built $tag"
