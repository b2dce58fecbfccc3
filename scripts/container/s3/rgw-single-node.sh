# shellcheck shell=bash
# A single-node Ceph RADOS Gateway with its objects in memory (memstore): one monitor, one OSD
# and the gateway, their state in one scratch directory. Sourced by .ci/s3-server (the S3 server
# of the specs, on the host) and by the object-store image's entrypoint (entrypoint.sh here);
# Debian's radosgw, ceph-mon and ceph-osd must be installed. Every function logs through `log`,
# which the sourcing script defines. Nothing here survives a stop: it is a store for tests and
# demonstrations, not for media anyone wants to keep.

# rgw_start DIR RGW_ENDPOINT MON_PORT MEMSTORE_BYTES: writes DIR/ceph.conf, starts the monitor,
# the OSD and the gateway (each its own daemon, pid file in DIR/run). RGW_ENDPOINT is what the
# gateway binds, e.g. 127.0.0.1:7480 or 0.0.0.0:7480.
rgw_start() {
  local dir=$1 rgw_endpoint=$2 mon_port=$3 memstore_bytes=$4 fsid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  mkdir -p "$dir/run" "$dir/log" "$dir/mon" "$dir/osd0" "$dir/rgw"
  # RGW deletes an object's tail (what is past its first 4 MiB) in a garbage collection that by
  # default waits 2 hours and runs hourly: deleted outputs would fill the memstore (a full OSD
  # blocks every request). The `rgw gc` lines collect them within seconds.
  cat >"$dir/ceph.conf" <<CONF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
osd objectstore = memstore
memstore device bytes = $memstore_bytes
rgw gc obj min wait = 0
rgw gc processor period = 5
rgw gc processor max time = 5
osd crush chooseleaf type = 0
run dir = $dir/run
log file = $dir/log/\$name.log
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
ms bind ipv4 = true
ms bind ipv6 = false
[mon.a]
mon data = $dir/mon
[osd.0]
osd data = $dir/osd0
[client.rgw.a]
rgw frontends = beast endpoint=$rgw_endpoint
rgw data = $dir/rgw
CONF
  local c=(-c "$dir/ceph.conf")
  monmaptool --create --addv a "[v1:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null
  ceph-mon "${c[@]}" --mkfs -i a --monmap "$dir/monmap" >&2
  ceph-mon "${c[@]}" -i a
  rgw_wait_for "the monitor" 30 ceph "${c[@]}" mon stat || return 1
  # A monitor that answers `mon stat` may still refuse the next command for a moment on a busy
  # machine ('EPERM: problem getting command descriptions from mon'): asked again until it takes it.
  rgw_wait_for "the monitor to take the OSD" 30 ceph "${c[@]}" osd create || return 1
  ceph-osd "${c[@]}" -i 0 --mkfs >/dev/null 2>&1
  ceph "${c[@]}" osd crush add osd.0 1.0 root=default host=localhost >/dev/null 2>&1
  # About one start in two the OSD exits at boot ('wrong fsid'); starting it again works.
  local attempt
  for attempt in 1 2 3 4; do
    ceph-osd "${c[@]}" -i 0 2>/dev/null || true
    if rgw_wait_for "the OSD up (attempt $attempt)" 20 rgw_osd_up "$dir"; then break; fi
    [ "$attempt" = 4 ] && { log "the OSD did not come up; logs in $dir/log"; return 1; }
  done
  radosgw "${c[@]}" -n client.rgw.a
}

# rgw_user DIR ACCESS_KEY SECRET_KEY: the user `mediagate` with these S3 credentials.
rgw_user() {
  radosgw-admin -c "$1/ceph.conf" -n client.rgw.a user create --uid=mediagate --display-name=mediagate \
    --access-key="$2" --secret-key="$3" >/dev/null 2>>"$1/log/admin.log"
}

# rgw_bucket ENDPOINT ACCESS_KEY SECRET_KEY BUCKET: waits for the gateway (60 s), then creates
# the bucket with a signed PUT (curl's SigV4).
rgw_bucket() {
  rgw_wait_for "the gateway on $1" 60 curl -sf -o /dev/null "$1/" || return 1
  curl -sf -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$2:$3" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$1/$4" >/dev/null
}

# rgw_pids DIR: the process ids of the running daemons.
rgw_pids() {
  local pid_file
  # `|| continue`, not `&& cat`: a directory without pid files (a start that failed before its
  # first daemon) must not end the function with a failed test, which `set -e` callers exit on.
  for pid_file in "$1"/run/*.pid; do
    [ -f "$pid_file" ] || continue
    cat "$pid_file"
  done
}

# rgw_stop DIR: stops the daemons (SIGTERM, up to 10 s each, then SIGKILL: a gateway busy at
# the end of a run was seen outliving the 10 s, holding its port and memory) and removes DIR.
rgw_stop() {
  local pids pid
  pids=$(rgw_pids "$1")
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  for pid in $pids; do
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$1"
}

rgw_osd_up() { ceph -c "$1/ceph.conf" osd stat 2>/dev/null | grep -q '1 up'; }

# rgw_wait_for WHAT SECONDS COMMAND...: waits until COMMAND succeeds.
rgw_wait_for() {
  local what=$1 deadline=$(($(date +%s) + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then log "timed out waiting for $what"; return 1; fi
    sleep 0.5
  done
}
