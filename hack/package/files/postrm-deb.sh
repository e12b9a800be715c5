#!/bin/sh
# podwatch's post-remove script for dpkg, which passes what it is doing as
# $1 (remove, purge, upgrade, ...). Each time, a running systemd is told the
# unit is gone, as daemon-reload.sh does after install.
#
# On purge alone the recorded state goes too. The package ships no state
# dir: under DynamicUser= with StateDirectory=podwatch systemd makes
# /var/lib/private/podwatch at the first start, and /var/lib/podwatch as a
# symlink to it (the dir itself if an override turns DynamicUser= off).
# rm -rf takes the symlink, not what it points to; /var/lib/private is
# systemd's, shared by every dynamic-user service, and stays.
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/private/podwatch /var/lib/podwatch
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
