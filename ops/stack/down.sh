#!/usr/bin/env bash
# Stops what ops/stack/up.sh STATE started: the processes it recorded in STATE/pids (by
# their ids, nothing else), then its PostgreSQL cluster, which it removes. Logs stay in STATE.
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
  # The cluster is the stack's own, made by up.sh: stopped, then removed with its data.
  pgdir=$(cat "$state/pgdir")
  "$here/../../.ci/stop-postgres" "$pgdir" && case "$pgdir" in /tmp/zuno-stack-pg.*) rm -rf "$pgdir" ;; esac
  rm -f "$state/pgdir"
fi
