package diff

import (
	"fmt"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"
)

// busyFolder writes one of its manifests every gap, with the kubelet's
// relist every period, each handed late by lag, as the judge's shared
// folder does: some relist of the kubelet's is always still to be taken
// in, so a forced fold always has events it holds (portHeld).
type busyFolder struct {
	run               *portRun
	files             []*types.File
	gap, period, lag  time.Duration
	at                time.Duration
	writes, maxWindow int
}

func newBusyFolder(n int, gap, period, lag time.Duration) *busyFolder {
	b := &busyFolder{run: newPortRun(period), gap: gap, period: period, lag: lag}
	b.run.signs = func(s *types.Snapshot) { s.KubeletRelistNext = s.KubeletRelist.Add(period) }
	for i := range n {
		f := valid(fmt.Sprintf("f%02d.yaml", i), pod(fmt.Sprintf("f%02d", i), "img:0"), t0)
		b.files = append(b.files, &f)
	}
	b.run.step(0, 0, nil, b.files...)
	return b
}

// write rewrites the next file and hands the snapshot, with the last
// relist of the kubelet's handed by now.
func (b *busyFolder) write() []types.Change {
	b.at += b.gap
	b.writes++
	i := b.writes % len(b.files)
	f := valid(b.files[i].Name, pod(fmt.Sprintf("f%02d", i), fmt.Sprintf("img:%d", b.writes)), t0.Add(b.at))
	b.files[i] = &f
	kr := time.Duration(0)
	if b.at > b.lag {
		kr = (b.at - b.lag) / b.period * b.period
	}
	chs := b.run.step(b.at, kr, []types.WatchEvent{{Name: f.Name}}, b.files...)
	b.maxWindow = max(b.maxWindow, len(b.run.st.port.tl.Inputs()))
	return chs
}

// BenchmarkAdvanceBusyFolderPort is one step of the port engine in a
// folder written every 10 ms, with a relist of the kubelet's every 2 s
// taken in 1 s late; max-window is the most inputs a window held, which
// each step explores.
func BenchmarkAdvanceBusyFolderPort(b *testing.B) {
	f := newBusyFolder(10, 10*time.Millisecond, 2*time.Second, time.Second)
	for range 300 {
		f.write()
	}
	b.ResetTimer()
	for range b.N {
		f.write()
	}
	b.ReportMetric(float64(f.maxWindow), "max-window")
}
