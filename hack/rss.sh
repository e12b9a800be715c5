#!/usr/bin/env bash
# Measures podwatch's resident memory after it listed N manifests (default
# 1000 and 10000), and its CPU while idle for IDLE seconds (default 0: skip).
# Usage: hack/rss.sh [N...]; needs bin/podwatch (make build).
set -euo pipefail
bin=${BIN:-bin/podwatch}
idle=${IDLE:-0}
[ -x "$bin" ] || { echo "build first: make build" >&2; exit 2; }
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1000 10000)
for n in "${counts[@]}"; do
  work=$(mktemp -d)
  mkdir "$work/m"
  for i in $(seq -w 1 "$n"); do
    printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%s\n  namespace: kube-system\n  labels: {app: pod-%s}\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n    command: [/pause]\n    resources: {requests: {cpu: 10m, memory: 16Mi}}\n' "$i" "$i" >"$work/m/pod-$i.yaml"
  done
  "$bin" --path "$work/m" --node-name bench --state-dir "$work/state" --settle-delay 0s >"$work/out" 2>"$work/err" &
  pid=$!
  deadline=$((SECONDS + 120))
  adds() { local c; c=$(grep -c StaticPodAdded "$work/out" 2>/dev/null) || true; echo "${c:-0}"; }
  while [ "$(adds)" -lt "$n" ]; do
    [ $SECONDS -lt $deadline ] || { echo "timeout waiting for $n adds" >&2; kill $pid; exit 1; }
    sleep 0.2
  done
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
  hwm=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
  line="manifests=$n rss_mib=$((rss / 1024)) peak_rss_mib=$((hwm / 1024))"
  if [ "$idle" -gt 0 ]; then
    # Let the first list's writes to the local store drain: idle means
    # nothing changing, not the tail of the start.
    sleep "${SETTLE:-15}"
    t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
    sleep "$idle"
    t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
    hz=$(getconf CLK_TCK)
    line="$line idle_cpu_percent=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$idle" 'BEGIN {printf "%.3f", 100 * d / hz / s}')"
    line="$line idle_rss_mib=$(($(awk '/^VmRSS/ {print $2}' /proc/$pid/status) / 1024))"
  fi
  echo "$line"
  kill $pid; wait $pid 2>/dev/null || true
  rm -rf "$work"
done
