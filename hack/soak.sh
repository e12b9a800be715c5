#!/usr/bin/env bash
# Soak test: runs podwatch for DURATION seconds on a temp folder
# where one manifest is rewritten every 100 ms (a new image each time: an
# UPDATE per write) and another flips valid/invalid every second, and samples
# the agent's RSS (VmRSS), goroutines (go_goroutines from /metrics) and open
# file descriptors (/proc/PID/fd) every INTERVAL seconds.
#
# Prints a table; exits 1 when the last sample exceeds the first sample taken
# after WARMUP seconds by more than the tolerances (RSS_TOL_PCT percent,
# GOROUTINE_TOL, FD_TOL), 2 on setup errors.
#
# Usage: hack/soak.sh            (DURATION=600 INTERVAL=10 WARMUP=60 by default)
#        DURATION=120 hack/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${DURATION:-600}
interval=${INTERVAL:-10}
warmup=${WARMUP:-60}
rss_tol_pct=${RSS_TOL_PCT:-20}
gor_tol=${GOROUTINE_TOL:-5}
fd_tol=${FD_TOL:-5}
bin=${BIN:-bin/podwatch}

if [ -z "${NO_BUILD:-}" ]; then
  make build >/dev/null || { echo "soak: build failed" >&2; exit 2; }
fi
[ -x "$bin" ] || { echo "soak: no $bin" >&2; exit 2; }

work=$(mktemp -d)
mkdir "$work/m"
pid=
writers=()
cleanup() {
  for w in "${writers[@]}"; do kill "$w" 2>/dev/null || true; done
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

pod() { # name image
  printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: kube-system\nspec:\n  containers:\n  - name: %s\n    image: %s\n' "$1" "$1" "$2"
}
pod stable registry.k8s.io/pause:3.10 >"$work/m/stable.yaml"
pod churn nginx:1.0 >"$work/m/churn.yaml"
pod flip nginx:1.29 >"$work/m/flip.yaml"

"$bin" --path "$work/m" --node-name soak --state-dir "$work/state" -o json --log-format json \
  --metrics-bind-address 127.0.0.1:0 --settle-delay 300ms --file-check-frequency 20s \
  >"$work/out" 2>"$work/err" &
pid=$!

# The metrics address is in the "serving metrics and health" log line.
addr=
for _ in $(seq 1 100); do
  addr=$(grep '"serving metrics and health"' "$work/err" 2>/dev/null | grep -o '"addr":"[^"]*"' | head -1 | cut -d'"' -f4) || true
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "soak: podwatch exited:" >&2; cat "$work/err" >&2; exit 2; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "soak: no metrics address in the log" >&2; cat "$work/err" >&2; exit 2; }

# Writer 1: churn.yaml rewritten (write + rename) every 100 ms, new image each time.
(
  i=0
  while :; do
    i=$((i + 1))
    pod churn "nginx:1.$i" >"$work/m/.churn.tmp"
    mv -f "$work/m/.churn.tmp" "$work/m/churn.yaml"
    sleep 0.1
  done
) &
writers+=($!)
# Writer 2: flip.yaml valid/invalid every second.
(
  v=1
  while :; do
    if [ $v = 1 ]; then
      printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: flip\nspec:\n  containers:\n  - name: flip\n' >"$work/m/.flip.tmp"
      v=0
    else
      pod flip nginx:1.29 >"$work/m/.flip.tmp"
      v=1
    fi
    mv -f "$work/m/.flip.tmp" "$work/m/flip.yaml"
    sleep 1
  done
) &
writers+=($!)

sample() { # t
  local rss gor fds
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  gor=$(curl -fsS "http://$addr/metrics" | awk '$1 == "go_goroutines" {print $2}')
  fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  printf '%6s %10s %10s %6s %8s\n' "$1" "$rss" "$gor" "$fds" "$(wc -l <"$work/out")"
  echo "$1 $rss $gor $fds" >>"$work/samples"
}

printf '%6s %10s %10s %6s %8s\n' "t_s" "rss_kib" "goroutines" "fds" "events"
start=$SECONDS
t=0
while :; do
  kill -0 "$pid" 2>/dev/null || { echo "soak: podwatch died" >&2; tail -20 "$work/err" >&2; exit 1; }
  sample "$t"
  [ "$t" -ge "$duration" ] && break
  next=$((t + interval))
  while [ $((SECONDS - start)) -lt "$next" ]; do sleep 0.5; done
  t=$((SECONDS - start))
done

for w in "${writers[@]}"; do kill "$w" 2>/dev/null || true; done
writers=()
errors=$(grep -c '"level":"ERROR"' "$work/err" || true)
echo "events printed: $(wc -l <"$work/out"); by reason:"
grep -o '"reason":"[A-Za-z]*"' "$work/out" | sort | uniq -c | sed 's/^/  /'
echo "error log lines: $errors"

base=$(awk -v w="$warmup" '$1 >= w {print; exit}' "$work/samples")
last=$(tail -1 "$work/samples")
[ -n "$base" ] || base=$(head -1 "$work/samples")
read -r bt brss bgor bfd <<<"$base"
read -r lt lrss lgor lfd <<<"$last"
fail=0
if [ "$lrss" -gt $((brss + brss * rss_tol_pct / 100)) ]; then
  echo "FAIL: RSS grew from ${brss} KiB (t=${bt}s) to ${lrss} KiB (t=${lt}s), over +${rss_tol_pct}%"; fail=1
fi
if [ "${lgor%.*}" -gt $((${bgor%.*} + gor_tol)) ]; then
  echo "FAIL: goroutines grew from $bgor to $lgor, over +$gor_tol"; fail=1
fi
if [ "$lfd" -gt $((bfd + fd_tol)) ]; then
  echo "FAIL: open fds grew from $bfd to $lfd, over +$fd_tol"; fail=1
fi
if [ "$errors" -gt 0 ]; then
  echo "FAIL: $errors ERROR log lines"; grep '"level":"ERROR"' "$work/err" | head -5; fail=1
fi
[ $fail = 0 ] && echo "OK: baseline t=${bt}s rss=${brss}KiB goroutines=$bgor fds=$bfd; last t=${lt}s rss=${lrss}KiB goroutines=$lgor fds=$lfd"
exit $fail
