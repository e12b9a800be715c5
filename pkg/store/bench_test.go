package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/events"
	v1 "k8s.io/api/core/v1"
)

// BenchmarkWrite is the cost of one Event write as the agent does it: encode,
// append, fdatasync. Compare with BenchmarkWriteNoSync for the disk flush.
func BenchmarkWrite(b *testing.B) {
	benchmarkWrite(b, fdatasync)
}

func BenchmarkWriteNoSync(b *testing.B) {
	benchmarkWrite(b, noSync)
}

func benchmarkWrite(b *testing.B, sync func(*os.File) error) {
	s := open(b, b.TempDir(), Options{}, newClock())
	s.sync = sync
	evs := make([]*eventRef, 50)
	for i := range evs {
		evs[i] = &eventRef{ev: event(name(i), 1, t0)}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := evs[i%len(evs)]
		e.ev.Count++
		e.ev.LastTimestamp.Time = t0.Add(time.Duration(i) * time.Second)
		write(b, s, e.ev)
		i++
	}
	b.ReportMetric(float64(s.compactions)/float64(b.N), "compactions/op")
}

// BenchmarkFdatasync is the flush alone, on the benchmark's temp dir's disk.
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := make([]byte, 600)
	var off int64
	for b.Loop() {
		if _, err := f.WriteAt(line, off); err != nil {
			b.Fatal(err)
		}
		off += int64(len(line))
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen is the startup cost of a full store: a log of
// DefaultMaxEvents live Events plus as much dead history again. It is the
// reload that DefaultMaxEvents and compaction keep short.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	s := open(b, dir, Options{}, newClock())
	s.sync = noSync
	for r := range 2 {
		for i := range DefaultMaxEvents {
			write(b, s, event(name(i), int32(r+1), t0))
		}
	}
	closeStore(b, s)
	size := fileSize(b, logPath(dir))
	for b.Loop() {
		s, err := Open(dir, Options{}, newClock(), nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Close()
	}
	b.ReportMetric(float64(size), "log-bytes")
}

type eventRef struct{ ev *v1.Event }

// BenchmarkCompact is one rewrite of a full live set (DefaultMaxEvents),
// fsyncs included: the pause a Write that triggers it sees.
func BenchmarkCompact(b *testing.B) {
	s := open(b, b.TempDir(), Options{}, newClock())
	s.sync = noSync
	for i := range DefaultMaxEvents {
		write(b, s, event(name(i), 1, t0))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for b.Loop() {
		if err := s.compact(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.size), "log-bytes")
}

// BenchmarkWriteBatch512 is one delivery batch of the first list of a large
// folder: 512 new Events, one append and one fdatasync. ns/op divided by
// 512 compares with BenchmarkWrite.
func BenchmarkWriteBatch512(b *testing.B) {
	s := open(b, b.TempDir(), Options{MaxEvents: 1 << 20}, newClock())
	w := make([]events.Write, 512)
	for i := range w {
		w[i] = events.Write{Event: event(name(i), 1, t0)}
	}
	b.ReportAllocs()
	round := 0
	for b.Loop() {
		round++
		for i := range w {
			w[i].Event.Count = int32(round)
		}
		if err := s.WriteBatch(context.Background(), w); err != nil {
			b.Fatal(err)
		}
	}
}
