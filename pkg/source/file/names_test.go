package file

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWatchedNamesKeepSnapshotOrder adds and removes names as the watch
// does, in an order that puts each one at the start, the middle and the
// end of the folder, and checks every snapshot against the cache sorted
// afresh; names placed one by one leave the names and their entries as
// they were otherwise (no rebuild).
func TestWatchedNamesKeepSnapshotOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(podYAML(name[:len(name)-5], "img")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		write(fmt.Sprintf("m-%02d.yaml", 2*i))
	}
	s := newTestSource(t, dir, nil)
	s.relist()
	check := func(step string) {
		t.Helper()
		gen := s.namesGen
		snap := s.snapshot(false, false)
		want := slices.Sorted(func(yield func(string) bool) {
			for name := range s.cache {
				if !yield(name) {
					return
				}
			}
		})
		if len(snap.Files) != len(want) {
			t.Fatalf("%s: %d files, want %d", step, len(snap.Files), len(want))
		}
		for i, f := range snap.Files {
			if f.Name != want[i] || f != s.cache[want[i]].file {
				t.Fatalf("%s: file %d is %q (%p), want %q (%p)", step, i, f.Name, f, want[i], s.cache[want[i]].file)
			}
		}
		if s.namesGen != gen {
			t.Errorf("%s: the names were rebuilt", step)
		}
	}
	check("listed")
	now := time.Now()
	for _, name := range []string{"a-first.yaml", "m-21.yaml", "z-last.yaml", "m-00a.yaml"} {
		write(name)
		if !s.refresh(name, s.entryPath(name), now, writtenClosed) {
			t.Fatalf("%s not found", name)
		}
		check("added " + name)
	}
	for _, name := range []string{"m-21.yaml", "a-first.yaml", "z-last.yaml", "m-38.yaml", "m-00.yaml"} {
		s.forget(name)
		check("removed " + name)
	}
	// A name already there changes nothing in the order.
	s.forget("not-there.yaml")
	check("forgot an unknown name")
}

// BenchmarkWatchedName is the source's share, beside the file's read, of
// a manifest created, then removed, in a folder of n: its name placed
// among the others or taken out, and a snapshot after each.
func BenchmarkWatchedName(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			s := benchSource(b, n)
			s.relist()
			_ = s.snapshot(true, false)
			name := "pod-00000a.yaml"
			path := filepath.Join(s.path, name)
			if err := os.WriteFile(path, []byte(podYAML("pod-00000a", "img")), 0o644); err != nil {
				b.Fatal(err)
			}
			if !s.refresh(name, path, time.Now(), writtenClosed) {
				b.Fatal("not found")
			}
			e := s.cache[name]
			b.ReportAllocs()
			for b.Loop() {
				s.forget(name)
				_ = s.snapshot(false, false)
				// As refresh adds a name it had not cached.
				s.cache[name] = e
				s.nameAdded(name, e)
				_ = s.snapshot(false, false)
			}
		})
	}
}
