package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	var o Options
	flag.StringVar(&o.Binary, "binary", "bin/podwatch-linux", "the Linux podwatch binary to package")
	flag.StringVar(&o.Unit, "unit", "deploy/systemd/podwatch.service", "the repo's systemd unit")
	flag.StringVar(&o.Follow, "follow", "deploy/systemd/podwatch.service.d/follow.conf", "the repo's opt-in drop-in, shipped as an example")
	flag.StringVar(&o.Version, "version", "dev", "the version, as git describe prints it")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "the binary's architecture (GOARCH)")
	flag.StringVar(&o.OutDir, "out", "bin", "the directory to write the packages to")
	flag.Parse()
	o.MTime = time.Unix(0, 0).UTC()
	paths, err := Build(o)
	for _, p := range paths {
		fmt.Println(p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
