#!/usr/bin/env bash
# Stops what ops/stack/up.sh STATE started: the processes it recorded in STATE/pids (by
# their ids, nothing else), then its PostgreSQL cluster. Logs stay in STATE.
set -uo pipefail
state=${1:-/tmp/zuno-stack}
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$state/pids" ]; then
  while read -r pid name; do
    kill -INT "$pid" 2>/dev/null && echo "stopping $name ($pid)"
  done <"$state/pids"
  for _ in $(seq 50); do
    alive=0
    while read -r pid _; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$state/pids"
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  while read -r pid name; do kill -KILL "$pid" 2>/dev/null && echo "killed $name ($pid)"; done <"$state/pids"
  : >"$state/pids"
fi
if [ -f "$state/pgdir" ]; then
  "$here/../../.ci/stop-postgres" "$(cat "$state/pgdir")"
fi
