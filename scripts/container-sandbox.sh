#!/usr/bin/env bash
# A copy of the workplace's shared tool (shared/tools/container-sandbox.sh, unchanged below this comment), committed
# because CI runs from a clean clone that cannot reach it; server/test/deploy/image.test.ts runs it before building.
# Makes OCI images buildable and runnable on these machines, which reach Debian's packages and the npm registry but
# no container registry:
#   1. installs podman, runc and mmdebstrap from Debian (once);
#   2. writes a containers.conf drop-in for this sandbox (runc, cgroupfs, no default ulimits: crun and the default
#      ulimits are refused here), which podman reads by itself;
#   3. builds the base image `docker.io/library/debian:bookworm-slim` locally from Debian's packages (mmdebstrap
#      minbase + ca-certificates), so that a Dockerfile `FROM debian:bookworm-slim` builds unchanged (the same line
#      pulls the real image anywhere else).
# Usage:  scripts/container-sandbox.sh   then   podman build --network=host -t NAME .
#         podman run --rm --network=host [-v …] NAME
# Host networking is required (no bridge here); servers inside listen on loopback ports of this machine.
# Idempotent: a second run only checks. Needs root (apt-get). Takes about a minute the first time.
set -euo pipefail
say() { echo "container-sandbox: $*" >&2; }
need=()
for p in podman runc mmdebstrap uidmap; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
conf=/etc/containers/containers.conf.d/50-sandbox.conf
mkdir -p "$(dirname "$conf")"
cat > "$conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
base=docker.io/library/debian:bookworm-slim
if ! podman image exists "$base" 2>/dev/null; then
  tmp=$(mktemp -d)
  say "building $base from Debian's packages (mmdebstrap)"
  # This machine reaches the registries through an egress proxy whose CA it trusts: the stand-in base trusts the
  # same CAs (only here; the real base image needs nothing of the kind), for apt, npm and Node inside builds.
  hooks=()
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    hooks=(--customize-hook='copy-in /usr/local/share/ca-certificates /usr/local/share/'
           --customize-hook='chroot "$1" update-ca-certificates --fresh >/dev/null')
  fi
  mmdebstrap --quiet --variant=minbase --include=ca-certificates "${hooks[@]}" bookworm "$tmp/base.tar" >&2
  podman import --quiet --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' "$tmp/base.tar" "$base" >/dev/null
  rm -rf "$tmp"
fi
podman run --rm --network=host "$base" true || { say "a container does not run here"; exit 1; }
say "ready: podman build --network=host … ; podman run --rm --network=host …"
