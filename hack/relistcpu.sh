#!/usr/bin/env bash
# Measures the CPU of podwatch's own periodic relist per unchanged file, as
# the whole process spends it: the file source's readdir and stats, the
# snapshot, the relist detector's handling of the opens, the diff's step and
# the agent loop. Two podwatch processes run one after the other on the same
# folder of N unchanged manifests: one listing every PERIOD, one every hour
# (the idle baseline). Each has its process CPU (the nanoseconds on CPU of
# every thread, /proc/PID/task/*/schedstat: the Go runtime does not end its
# threads) read over WINDOW seconds once its first list is out and the files
# are older than the source's racy window, and after its first relist
# (which reads again the files the first list found within that window);
# the relists in the window are counted from
# podwatch_list_duration_seconds_count.
#   relist CPU per file = (CPU listing - CPU idle) / relists / N
# Usage: hack/relistcpu.sh [N] (default 1000); needs bin/podwatch (make
# build). From the environment: PERIOD (default 20s, the default
# --file-check-frequency, so that each relist finds the CPU's caches as a
# node leaves them), WINDOW (default 120) and RUNS (default 1).
set -euo pipefail
bin=${BIN:-bin/podwatch}
n=${1:-1000}
period=${PERIOD:-20s}
window=${WINDOW:-120}
runs=${RUNS:-1}
[ -x "$bin" ] || { echo "build first: make build" >&2; exit 2; }
command -v curl >/dev/null || { echo "needs curl" >&2; exit 2; }

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/m"
for i in $(seq -w 1 "$n"); do
  printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%s\n  namespace: kube-system\n  labels: {app: pod-%s}\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n    command: [/pause]\n    resources: {requests: {cpu: 10m, memory: 16Mi}}\n' "$i" "$i" >"$work/m/pod-$i.yaml"
done

cpuns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d", s}'; }
lists() {
  curl -fsS "http://$1/metrics" | awk '/^podwatch_list_duration_seconds_count/ {print $2}'
}

# measure PERIOD sets cpu (ns) and relists over the window for one
# process.
measure() {
  local every=$1 state addr deadline t0 t1 c0 c1
  state=$(mktemp -d -p "$work")
  "$bin" --path "$work/m" --node-name bench --state-dir "$state" --settle-delay 0s \
    --file-check-frequency "$every" --metrics-bind-address 127.0.0.1:0 --log-format json \
    >"$state/out" 2>"$state/err" &
  pid=$!
  deadline=$((SECONDS + 120))
  addr=
  while [ -z "$addr" ] || [ "$(grep -cE "StaticPod(Added|Found)" "$state/out" || true)" -lt "$n" ]; do
    [ $SECONDS -lt $deadline ] || { echo "timeout waiting for podwatch's first list" >&2; exit 1; }
    sleep 0.2
    addr=$(sed -n 's/.*"metricsAddr":"\([^"]*\)".*/\1/p' "$state/err" | head -1)
  done
  # The first list's writes to the local store drain, and every file is
  # older than the racy window: the steady state of an unchanged folder.
  sleep "${SETTLE:-5}"
  # The first relist after the start reads every file again (their
  # identities were taken within the racy window of their writes); the
  # window starts after it.
  if [ "$every" != 1h ]; then
    while [ "$(lists "$addr")" -lt 2 ]; do
      [ $SECONDS -lt $((deadline + 120)) ] || { echo "timeout waiting for the first relist" >&2; exit 1; }
      sleep 0.5
    done
    sleep 1
  fi
  c0=$(lists "$addr")
  t0=$(cpuns "$pid")
  sleep "$window"
  t1=$(cpuns "$pid")
  c1=$(lists "$addr")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=
  cpu=$((t1 - t0)) relists=$((c1 - c0))
}

for _ in $(seq 1 "$runs"); do
  measure "$period"
  busy=$cpu busylists=$relists
  measure 1h
  idle=$cpu idlelists=$relists relists=$busylists
  [ "$relists" -gt 0 ] || { echo "no relist in the window" >&2; exit 1; }
  awk -v busy="$busy" -v idle="$idle" -v r="$relists" -v ir="$idlelists" -v n="$n" -v w="$window" -v p="$period" 'BEGIN {
    us = (busy - idle) / 1000 / r / n
    printf "manifests=%d period=%s window_s=%d relists=%d cpu_ms=%.1f idle_cpu_ms=%.1f (relists %d) relist_cpu_us_per_file=%.2f\n", n, p, w, r, busy / 1e6, idle / 1e6, ir, us
  }'
done
