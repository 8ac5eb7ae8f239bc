#!/usr/bin/env bash
# Stop a dockerd started by start_dockerd.sh (clean shutdown: SIGTERM, wait).
set -euo pipefail
pidfile="${DOCKERD_PIDFILE:-/tmp/asrbench-dockerd.pid}"
[ -f "$pidfile" ] || exit 0
pid="$(cat "$pidfile")"
kill -TERM "$pid" 2>/dev/null || exit 0
for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 1; done
echo "dockerd ($pid) still running after 30 s" >&2
