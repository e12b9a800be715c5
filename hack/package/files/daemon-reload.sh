#!/bin/sh
# podwatch's post-install and post-remove script, for dpkg and rpm alike: let
# a running systemd see the unit that was added, changed or removed. Nothing
# is enabled, started or stopped; outside systemd (a container, a chroot, an
# image build) there is nothing to tell.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
