package metrics

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// processFamilies are the process_* metrics under the names Prometheus's
// process collector gives them, read from /proc at each scrape; a figure
// that cannot be read is left out of that scrape.
func processFamilies() []family {
	stat := func(name, help, typ string, f func(s procStat) float64) family {
		return newCollectorFunc(name, help, typ, nil, func(emit func(float64, ...string)) {
			if s, ok := readProcStat(); ok {
				emit(f(s))
			}
		})
	}
	limit := func(name, help, row string) family {
		return newCollectorFunc(name, help, typeGauge, nil, func(emit func(float64, ...string)) {
			if v, ok := readLimit(row); ok {
				emit(v)
			}
		})
	}
	return []family{
		stat("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", typeCounter,
			func(s procStat) float64 { return float64(s.utime+s.stime) / clockTicks }),
		stat("process_virtual_memory_bytes", "Virtual memory size in bytes.", typeGauge,
			func(s procStat) float64 { return float64(s.vsize) }),
		stat("process_resident_memory_bytes", "Resident memory size in bytes.", typeGauge,
			func(s procStat) float64 { return float64(s.rss * uint64(os.Getpagesize())) }),
		newCollectorFunc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", typeGauge, nil,
			func(emit func(float64, ...string)) {
				s, ok := readProcStat()
				boot, bok := bootTime()
				if ok && bok {
					emit(boot + float64(s.starttime)/clockTicks)
				}
			}),
		newCollectorFunc("process_open_fds", "Number of open file descriptors.", typeGauge, nil,
			func(emit func(float64, ...string)) {
				if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
					emit(float64(len(ents)))
				}
			}),
		limit("process_max_fds", "Maximum number of open file descriptors.", "Max open files"),
		limit("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "Max address space"),
	}
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicks = 100

type procStat struct {
	utime, stime, starttime, vsize, rss uint64
}

// readProcStat reads the fields of /proc/self/stat that the metrics use.
func readProcStat() (procStat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command, in parentheses, may hold spaces: fields count from the
	// last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15, starttime
	// 22, vsize 23, rss 24.
	if len(f) < 22 {
		return procStat{}, false
	}
	var s procStat
	var errs [5]error
	s.utime, errs[0] = strconv.ParseUint(f[11], 10, 64)
	s.stime, errs[1] = strconv.ParseUint(f[12], 10, 64)
	s.starttime, errs[2] = strconv.ParseUint(f[19], 10, 64)
	s.vsize, errs[3] = strconv.ParseUint(f[20], 10, 64)
	s.rss, errs[4] = strconv.ParseUint(f[21], 10, 64)
	for _, err := range errs {
		if err != nil {
			return procStat{}, false
		}
	}
	return s, true
}

// bootTime is btime of /proc/stat, in seconds since the epoch.
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return float64(n), err == nil
		}
	}
	return 0, false
}

// readLimit is the soft limit of a row of /proc/self/limits ("Max open
// files"); unlimited is the largest uint64.
func readLimit(row string) (float64, bool) {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, row)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return float64(^uint64(0)), true
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		return float64(n), err == nil
	}
	return 0, false
}
