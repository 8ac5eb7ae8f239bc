#!/usr/bin/env bash
# Start a Docker Engine if none answers (Debian docker.io). Prints the PID file it started, or
# nothing when an engine was already running. Stop with scripts/stop_dockerd.sh.
set -euo pipefail
if docker info >/dev/null 2>&1; then exit 0; fi
command -v dockerd >/dev/null || { echo "dockerd not found: apt-get install docker.io" >&2; exit 2; }
log="${DOCKERD_LOG:-/tmp/asrbench-dockerd.log}"
pidfile="${DOCKERD_PIDFILE:-/tmp/asrbench-dockerd.pid}"
nohup dockerd --pidfile "$pidfile" >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then echo "$pidfile"; exit 0; fi
  sleep 1
done
echo "dockerd did not answer within 60 s; log: $log" >&2
tail -20 "$log" >&2
exit 1
