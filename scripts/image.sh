#!/usr/bin/env bash
# Builds Roto's container image without a registry: a root filesystem holding the binary
# and the shared libraries it links (as ldd names them), imported with `docker import`.
#
#   scripts/image.sh [--binary PATH] [--tag NAME]
#
# PATH defaults to target/release/roto-server (build it first with
# `cargo build -p roto-server --release --locked`); NAME to roto:latest. The image runs
# the binary itself as its entrypoint, listening on 0.0.0.0:4566, in memory
# (ROTO_EPHEMERAL=true), and prints `Ready.` once it answers (ROTO_PRINT_READY=true), as
# LocalStack's image does. Any `docker run IMAGE ARGS` are the server's flags; every
# setting also has its ROTO_* variable. docs/container.md shows docker-compose,
# testcontainers and the docker executor through a mounted engine socket.
#
# Prints the image's name on stdout. Talks to the engine `docker` finds (DOCKER_HOST).
set -Eeuo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

binary="$ROOT/target/release/roto-server"
tag="roto:latest"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    *) echo "usage: $0 [--binary PATH] [--tag NAME]" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || { echo "image: no executable at $binary (build it first)" >&2; exit 1; }

rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{usr/local/bin,tmp,etc,var/lib/roto}
chmod 1777 "$rootfs/tmp"
cp -L "$binary" "$rootfs/usr/local/bin/roto-server"
# The dynamic loader and every library the binary links, at the paths it names them by.
for lib in $(ldd "$binary" | grep -o '/[^ ]*'); do
  cp -L --parents "$lib" "$rootfs"
done
# Certificate authorities, for the few outbound HTTPS calls (EventBridge API destinations,
# JWT issuers' keys).
for bundle in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
  [ -f "$bundle" ] && cp -L --parents "$bundle" "$rootfs"
done
echo "root:x:0:0:root:/root:/usr/local/bin/roto-server" >"$rootfs/etc/passwd"
echo "root:x:0:" >"$rootfs/etc/group"

tar -C "$rootfs" -cf - . | docker import \
  --change 'ENTRYPOINT ["/usr/local/bin/roto-server"]' \
  --change 'ENV ROTO_HOST=0.0.0.0 ROTO_PORT=4566 ROTO_EPHEMERAL=true ROTO_PRINT_READY=true TMPDIR=/tmp' \
  --change 'EXPOSE 4566' \
  --change 'WORKDIR /var/lib/roto' \
  - "$tag" >/dev/null
echo "$tag"
