package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "userlatency:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("userlatency", flag.ContinueOnError)
	floorDir := fs.String("floor", "", "run as the floor watcher on this folder (used by the measurement itself)")
	cfg := config{}
	fs.StringVar(&cfg.podwatch, "podwatch", "bin/podwatch", "the podwatch binary (make build)")
	fs.StringVar(&cfg.base, "dir", defaultBase(), "where the temporary folders go (a tmpfs if there is one)")
	fs.IntVar(&cfg.samples, "samples", 200, "renames measured per folder size")
	fs.IntVar(&cfg.warmup, "warmup", 5, "renames before the measured ones, not counted")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "longest wait for a sample's line; past it the run fails")
	fs.DurationVar(&cfg.interval, "interval", 100*time.Millisecond, "pause between one sample's lines and the next rename, so each change finds podwatch idle as on a node (0: back to back)")
	fs.DurationVar(&cfg.startTimeout, "start-timeout", 2*time.Minute, "longest wait for a watcher to be ready (podwatch: its first list's lines)")
	othersFlag := fs.String("others", "0,1000", "comma-separated numbers of other manifests in the folder, one measurement each")
	podwatchArgs := fs.String("podwatch-args", "", "extra podwatch flags, space-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *floorDir != "" {
		return runFloor(*floorDir)
	}
	var sizes []int
	for f := range strings.SplitSeq(*othersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return fmt.Errorf("-others: %q is not a count", f)
		}
		sizes = append(sizes, n)
	}
	if cfg.samples < 1 {
		return fmt.Errorf("-samples must be at least 1")
	}
	cfg.extraArgs = strings.Fields(*podwatchArgs)
	var err error
	if cfg.self, err = os.Executable(); err != nil {
		return err
	}
	var results []result
	for _, n := range sizes {
		fmt.Fprintf(os.Stderr, "userlatency: %d other manifests, %d samples...\n", n, cfg.samples)
		res, err := runSize(cfg, n)
		if err != nil {
			return fmt.Errorf("%d other manifests: %w", n, err)
		}
		results = append(results, res)
	}
	return report(stdout, cfg, results)
}

func defaultBase() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// report prints p50 and p99 in milliseconds for the floor, podwatch, and
// podwatch above the floor (the difference of the two percentiles).
func report(w io.Writer, cfg config, results []result) error {
	fmt.Fprintf(w, "rename to line, ms (p50 / p99); %d samples per size after %d warm-up, %v apart, in %s\n", cfg.samples, cfg.warmup, cfg.interval, cfg.base)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "other manifests\tfloor\tpodwatch\tpodwatch above the floor\tpodwatch's other lines")
	for _, r := range results {
		f50, f99 := percentile(r.floor, 50), percentile(r.floor, 99)
		p50, p99 := percentile(r.podwatch, 50), percentile(r.podwatch, 99)
		fmt.Fprintf(tw, "%d\t%.2f / %.2f\t%.2f / %.2f\t%.2f / %.2f\t%d\n", r.others,
			ms(f50), ms(f99), ms(p50), ms(p99), ms(p50-f50), ms(p99-f99), r.skipped)
	}
	return tw.Flush()
}
