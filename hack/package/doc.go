// Command package builds podwatch's .deb and .rpm with nFPM: the binary at
// /usr/bin/podwatch, the systemd unit (the repo's, with ExecStart pointed
// there), /etc/default/podwatch as a config file, the opt-in drop-in that
// grants the container runtime's socket as an example systemd does not read
// (/usr/share/podwatch/follow.conf), and maintainer scripts that tell a
// running systemd to reload its units. It ships no state directory: under
// DynamicUser= systemd creates /var/lib/private/podwatch at the first start;
// the .deb's post-remove deletes it, and the /var/lib/podwatch symlink, on
// dpkg --purge only (rpm has no purge: rpm -e leaves it). It is its own module so that the agent does not depend on
// nFPM.
package main
