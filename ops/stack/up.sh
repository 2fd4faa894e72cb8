#!/usr/bin/env bash
# Starts the parts of ops/compose.yaml that run without Docker (ops/README.md, "Without
# Docker"): a PostgreSQL cluster (event store, read models and durable bus: KurrentDB cannot
# run here, so the log is on Postgres), two `zuno serve` on loopback, a `zuno worker`, and
# Prometheus scraping both servers with ops/prometheus/alerts.yml. Then it checks that each
# answers: both servers list sessions and serve /metrics, a session created through one is
# read through the other, Prometheus is ready and reports both targets up. It leaves them
# running; ops/stack/down.sh STATE stops them. On any failure it prints the logs, stops what
# it started and exits non-zero.
#
#   ops/stack/up.sh [STATE_DIR]     # default /tmp/zuno-stack; ZUNO_BIN: a built zuno to use
set -euo pipefail
state=${1:-/tmp/zuno-stack}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$state"
state=$(cd "$state" && pwd)
: >"$state/pids"

fail() {
  echo "stack: $*" >&2
  for f in "$state"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 40 "$f" >&2; }; done
  "$here/down.sh" "$state" >&2 || true
  exit 1
}
trap 'fail "a command failed (line $LINENO)"' ERR

zuno=${ZUNO_BIN:-}
if [ -z "$zuno" ]; then
  zuno=$state/zuno
  (cd "$repo" && go build -o "$zuno" ./cmd/zuno)
fi
for tool in prometheus curl psql; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install prometheus curl postgresql)"
done

# PostgreSQL: a cluster of the stack's own, in a directory the postgres user can reach
# (.ci/start-postgres runs it as that user when we are root), on a port from 55600 up.
pgdir=$(cat "$state/pgdir" 2>/dev/null || mktemp -d /tmp/zuno-stack-pg.XXXXXX)
echo "$pgdir" >"$state/pgdir"
admin=$(ZUNO_PG_PORT=${ZUNO_STACK_PG_PORT:-55600} "$repo/.ci/start-postgres" "$pgdir")
psql "$admin" -qtAc "SELECT 1 FROM pg_database WHERE datname = 'zuno'" | grep -q 1 ||
  psql "$admin" -qc "CREATE DATABASE zuno"
db=${admin/\/postgres\?//zuno?}

mkdir -p "$state/ws" "$state/home"
echo '{}' >"$state/config.json"
echo '{"turns":[{"text":"the stack answers"}]}' >"$state/script.json"
zuno_env=(env ZUNO_EVENTSTORE_URL="$db" ZUNO_BUS_URL="$db" ZUNO_CONFIG="$state/config.json"
  ZUNO_MODEL="scripted:$state/script.json" HOME="$state/home"
  XDG_DATA_HOME="$state/home/data" XDG_CONFIG_HOME="$state/home/config")

start() { # name, command...: runs it in the background, its pid kept for down.sh
  local name=$1
  shift
  (cd "$state/ws" && exec "$@" >"$state/$name.log" 2>&1) &
  echo "$! $name" >>"$state/pids"
}

wait_for() { # seconds, description, command...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within the time allowed"
    sleep 0.2
  done
}

start worker "${zuno_env[@]}" "$zuno" worker
for i in 1 2; do
  start "serve$i" "${zuno_env[@]}" "$zuno" serve --listen 127.0.0.1:0
  wait_for 30 "zuno serve $i listening" grep -q 'listening on http://' "$state/serve$i.log"
  grep -o 'http://127\.0\.0\.1:[0-9]*' "$state/serve$i.log" | head -n1 >"$state/serve$i.url"
done
s1=$(cat "$state/serve1.url") s2=$(cat "$state/serve2.url")

for s in "$s1" "$s2"; do
  curl -fsS "$s/api/sessions?limit=1" >/dev/null || fail "$s does not list sessions"
  # Read whole, then matched: grep -q stops at the first match, and under pipefail curl's
  # write to the closed pipe (the page outgrew the pipe's buffer) would fail the check.
  metrics=$(curl -fsS "$s/metrics") || fail "$s does not serve /metrics"
  grep -q '^zuno_projection_checkpoint_position' <<<"$metrics" || fail "$s serves no zuno metrics"
done
created=$(curl -fsS -X POST "$s1/api/sessions" -H 'Content-Type: application/json' \
  -d "{\"commandId\":\"stack-$$-$RANDOM\",\"title\":\"stack check\",\"directory\":\"$state/ws\"}")
session=$(echo "$created" | grep -o '"sessionId":"[^"]*"' | cut -d'"' -f4)
[ -n "$session" ] || fail "no session created through $s1: $created"
wait_for 30 "the session created through server 1 read through server 2" curl -fsS "$s2/api/sessions/$session"

# Prometheus on the first free port from 19090, scraping both servers every second.
port=${ZUNO_STACK_PROM_PORT:-19090}
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
cat >"$state/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$repo/ops/prometheus/alerts.yml"]
scrape_configs:
  - job_name: zuno
    static_configs:
      - targets: ["${s1#http://}", "${s2#http://}"]
YAML
start prometheus prometheus --config.file="$state/prometheus.yml" --storage.tsdb.path="$state/prometheus-data" \
  --web.listen-address="127.0.0.1:$port"
prom=http://127.0.0.1:$port
echo "$prom" >"$state/prometheus.url"
wait_for 30 "Prometheus ready" curl -fsS "$prom/-/ready"
targets_up() { [ "$(curl -fsS "$prom/api/v1/targets?state=active" | grep -o '"health":"up"' | wc -l)" -eq 2 ]; }
wait_for 30 "Prometheus scraping both servers (targets up)" targets_up
wait_for 30 "zuno_turns_total or zuno_projection_lag_events in Prometheus" \
  sh -c "curl -fsS '$prom/api/v1/query?query=count(zuno_projection_lag_events)' | grep -q '\"result\":\[{'"

trap - ERR
echo "stack up in $state: servers $s1 $s2, Prometheus $prom (both targets up), Postgres $db"
