#!/usr/bin/env bash
# Checks deploy/systemd/podwatch.service: systemd-analyze verify must accept it,
# and its sandbox must not loosen, judged two ways by systemd-analyze security:
# the overall exposure must stay at or under THRESHOLD (0-100, ten times the
# printed score), and no check may fail that is not in ACCEPTED below.
# Then the same with the opt-in drop-in podwatch.service.d/follow.conf, which
# may fail one check more, FOLLOW_ACCEPTED, and nothing else.
#
# Usage: hack/verify-systemd.sh [BINARY]   (default bin/podwatch)
# verify rejects an ExecStart that is not executable, so the check runs on a
# copy of the unit whose ExecStart is BINARY. Needs no running systemd. If
# systemd-analyze is missing it installs Debian's systemd package (as root).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
unit_src=$root/deploy/systemd/podwatch.service
follow_src=$root/deploy/systemd/podwatch.service.d/follow.conf
installed_bin=/usr/local/bin/podwatch
# The unit scores 1.5 (15) with systemd 252; 17 leaves room for rounding
# across systemd versions, not for a dropped protection.
threshold=${THRESHOLD:-17}
# Checks the unit fails on purpose; each is needed for what podwatch does.
accepted=(
	'RootDirectory=/RootImage='                          # runs the host's binary and reads the host's /etc
	'AmbientCapabilities='                               # CAP_DAC_READ_SEARCH, to read root-only manifests
	'CapabilityBoundingSet=~CAP_(DAC_*|FOWNER|IPC_OWNER)' # the same capability
	'PrivateUsers='                                      # a user namespace would void that capability on host files
	'PrivateNetwork='                                    # talks to the API server
	'RestrictAddressFamilies=~AF_(INET|INET6)'           # the same, and metrics on 127.0.0.1
	'RestrictAddressFamilies=~AF_UNIX'                   # NSS resolver and syslog sockets; the CRI socket with follow.conf
	'IPAddressDeny='                                     # the API server's address is not known here
	'DeviceAllow='                                       # char-rtc:r, added by ProtectClock=yes itself
)
# What the follow drop-in grants on top, and all it may.
follow_accepted=(
	'SupplementaryGroups=' # the group that owns the runtime's socket
)

die() { echo "verify-systemd: $*" >&2; exit 1; }

bin=${1:-bin/podwatch}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ -f "$bin" ] && [ -x "$bin" ] || die "$bin is not an executable file (build it first: make build)"
[ -f "$unit_src" ] || die "$unit_src is missing"
[ -f "$follow_src" ] || die "$follow_src is missing"
# The drop-in sets the group and nothing else, scored or not (an
# AmbientCapabilities= outside the bounding set scores nothing, yet has no
# business there).
extra=$(grep -Ev '^[[:space:]]*(#|$)|^\[Service\]$|^SupplementaryGroups=' "$follow_src") &&
	die "$follow_src sets more than SupplementaryGroups=: $extra"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] || die "systemd-analyze is missing; install Debian's systemd package (needs root)"
	command -v apt-get >/dev/null 2>&1 || die "systemd-analyze is missing and there is no apt-get to install it"
	echo "verify-systemd: installing systemd for systemd-analyze" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends systemd >&2
	command -v systemd-analyze >/dev/null 2>&1 || die "systemd-analyze still missing after installing systemd"
fi
# --offline and --recursive-errors came in systemd 250.
sd_version=$(systemd-analyze --version | awk 'NR == 1 { print $2 + 0 }')
[ "${sd_version:-0}" -ge 250 ] || die "systemd-analyze $sd_version is too old: need 250 or newer"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The copy keeps the unit's name: security and verify report by unit name.
unit=$work/podwatch.service
grep -q "^ExecStart=$installed_bin " "$unit_src" || die "ExecStart in $unit_src no longer starts $installed_bin"
sed "s#^ExecStart=$installed_bin #ExecStart=$bin #" "$unit_src" >"$unit"

# check LABEL ACCEPTED...: verify and gate the unit at $unit, with whatever
# drop-ins sit in $unit.d (systemd-analyze reads them from the unit's
# folder). Leaves the names of the failing checks in $failing.
check() {
	local label=$1
	shift
	local accepted=("$@")
	# verify: --man=no because the Documentation= is a URL and man pages may be
	# absent; --recursive-errors=no so units we are ordered after (network.target,
	# multi-user.target), which a container may not have, are not judged. Any
	# line naming our unit or a drop-in is a failure even when systemd-analyze
	# exits 0.
	local failed=0 out
	if ! out=$(systemd-analyze verify --man=no --recursive-errors=no "$unit" 2>&1); then
		failed=1
	fi
	if [ -n "$out" ]; then
		printf '%s\n' "$out" | sed 's/^/verify: /' >&2
		if printf '%s\n' "$out" | grep -q 'podwatch'; then failed=1; fi
	fi
	[ "$failed" -eq 0 ] || die "$label: systemd-analyze verify rejected it"
	echo "verify-systemd: $label: systemd-analyze verify: ok (systemd $sd_version)"

	# security: the summary line carries the score; --json lists the checks.
	# LC_ALL=C keeps the summary free of locale-dependent glyphs.
	local summary json name a ok
	summary=$(LC_ALL=C systemd-analyze security --offline=yes "$unit" 2>&1 | grep 'Overall exposure level') ||
		die "$label: systemd-analyze security printed no exposure level"
	echo "verify-systemd: $label: ${summary#-> }"
	json=$(systemd-analyze security --offline=yes --json=short "$unit")
	# One object per line; keep the names of failed checks. No jq on a fresh machine.
	failing=$(printf '%s' "$json" | tr '{' '\n' | grep '"set":false' |
		sed -n 's/.*"name":"\([^"]*\)".*/\1/p') || true
	local unexpected=()
	while IFS= read -r name; do
		[ -n "$name" ] || continue
		ok=0
		for a in "${accepted[@]}"; do [ "$name" = "$a" ] && ok=1 && break; done
		[ "$ok" -eq 1 ] || unexpected+=("$name")
	done <<<"$failing"
	if [ ${#unexpected[@]} -gt 0 ]; then
		printf 'verify-systemd: %s: check newly failing: %s\n' "$label" "${unexpected[@]}" >&2
		die "$label: the sandbox loosened (see above); fix it, or accept the check in $0 with a reason"
	fi
	if ! systemd-analyze security --offline=yes --threshold="$threshold" "$unit" >/dev/null 2>&1; then
		die "$label: exposure is above the threshold $threshold (0-100): ${summary#-> }"
	fi
	echo "verify-systemd: $label: ok: exposure within threshold $threshold/100, failing checks all accepted"
}

check podwatch.service "${accepted[@]}"
mkdir "$unit.d"
cp "$follow_src" "$unit.d/follow.conf"
check "podwatch.service + follow.conf" "${accepted[@]}" "${follow_accepted[@]}"
# The drop-in must have been read and must grant the group: else the gate
# above judged the bare unit again.
printf '%s\n' "$failing" | grep -qx 'SupplementaryGroups=' ||
	die "podwatch.service + follow.conf: systemd-analyze sees no SupplementaryGroups= from $follow_src"
