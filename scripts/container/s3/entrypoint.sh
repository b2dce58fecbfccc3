#!/usr/bin/env bash
# The development object store of compose.s3.yaml: a single-node Ceph RADOS Gateway with its
# objects in memory (rgw-single-node.sh, the same start as the specs' .ci/s3-server). Every
# start is a new empty store: the user S3_ACCESS_KEY / S3_SECRET_KEY and the bucket S3_BUCKET,
# the gateway on S3_PORT (7480), at most S3_MEMSTORE_BYTES of objects (1 GiB) in the container's
# memory. A stop, a restart or a crash loses every object. For media anyone keeps, point
# mediagate at a real S3 (docs/operations/scaling-out.md#the-deployment-with-compose).
set -euo pipefail
log() { echo "mediagate-s3: $*" >&2; }
# shellcheck source=rgw-single-node.sh
. /usr/local/lib/mediagate-s3/rgw-single-node.sh

bucket=${S3_BUCKET:-mediagate}
port=${S3_PORT:-7480}
for name in S3_ACCESS_KEY S3_SECRET_KEY; do
  if [ -z "${!name:-}" ]; then log "$name is not set (the credentials the store accepts)"; exit 78; fi
done
dir=/run/mediagate-s3
ready=/run/mediagate-s3.ready
rm -rf "$dir" "$ready"
mkdir -p "$dir"

stopping=0
stop() {
  stopping=1
  log "stopping (the objects are lost)"
  rm -f "$ready"
  rgw_stop "$dir"
  exit 0
}
trap stop TERM INT

failed() {
  log "$1; the last lines of the daemons' logs:"
  tail -n 15 "$dir"/log/*.log >&2 2>/dev/null || true
  rgw_stop "$dir"
  exit 1
}

rgw_start "$dir" "0.0.0.0:$port" 6789 "${S3_MEMSTORE_BYTES:-1073741824}" || failed "the cluster did not start"
rgw_user "$dir" "$S3_ACCESS_KEY" "$S3_SECRET_KEY" || failed "creating the user"
rgw_bucket "http://127.0.0.1:$port" "$S3_ACCESS_KEY" "$S3_SECRET_KEY" "$bucket" || failed "creating the bucket $bucket"
# `radosgw-admin bucket list --bucket <name>` (docker exec) finds the store without -c.
mkdir -p /etc/ceph && ln -sf "$dir/ceph.conf" /etc/ceph/ceph.conf
touch "$ready"
log "ready: bucket $bucket on port $port (objects in memory, lost at stop)"

# PID 1 stays to stop the daemons on SIGTERM, and ends the container when one of them dies.
pids=$(rgw_pids "$dir")
while [ "$stopping" = 0 ]; do
  for pid in $pids; do
    kill -0 "$pid" 2>/dev/null || failed "process $pid exited"
  done
  sleep 2 &
  wait $! || true
done
