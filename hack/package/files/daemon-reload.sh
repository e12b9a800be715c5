#!/bin/sh
# podwatch's post-install script, for dpkg and rpm alike, and rpm's
# post-remove (%postun): let a running systemd see the unit that was added,
# changed or removed. Nothing is enabled, started or stopped; outside systemd
# (a container, a chroot, an image build) there is nothing to tell. rpm has
# no purge, so `rpm -e` leaves the state systemd made in
# /var/lib/private/podwatch, as `dpkg --remove` does; dpkg's post-remove,
# postrm-deb.sh, removes it on `dpkg --purge`.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
