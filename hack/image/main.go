package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	bin := flag.String("binary", "bin/podwatch-linux", "the static podwatch binary to put in the image")
	ref := flag.String("tag", "podwatch:dev", "the image's name and tag in the tarball")
	out := flag.String("out", "bin/podwatch-image.tar", "the tarball to write")
	version := flag.String("version", "dev", "the version label")
	arch := flag.String("arch", runtime.GOARCH, "the binary's architecture")
	flag.Parse()
	img, err := Build(*bin, *arch, *version, time.Unix(0, 0).UTC())
	if err == nil {
		err = Write(img, *ref, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	digest, _ := img.Digest()
	fmt.Printf("%s: %s (%s)\n", *out, *ref, digest)
}
