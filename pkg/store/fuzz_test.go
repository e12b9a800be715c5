package store

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"
)

// FuzzOpen feeds arbitrary bytes as the event log: Open and ReadEvents must
// never panic, and Open must end with a usable store, whatever it reports.
func FuzzOpen(f *testing.F) {
	rec := func(n int, c int32) []byte {
		line, err := encodeRecord(event(name(n), c, t0))
		if err != nil {
			f.Fatal(err)
		}
		return line
	}
	good := bytes.Join([][]byte{rec(0, 1), rec(1, 1), rec(0, 2)}, nil)
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Add(append(bytes.Clone(good), make([]byte, 300)...))
	f.Add([]byte("00000000 2 {}\n"))                                            // checksum of other bytes
	f.Add([]byte("297bd0aa 2 {}\n"))                                            // right checksum, no name
	f.Add([]byte("147e9acc 4 null\n"))                                          // right checksum, JSON null
	f.Add([]byte(`59eab503 39 {"metadata":{"name":"x"},"count":"bad"}` + "\n")) // right checksum, wrong types
	f.Add([]byte("ffffffff -1 \n"))                                             // negative length
	f.Add([]byte("zzzzzzzz 9999999999999999999 x\n"))                           // nonsense fields
	f.Add([]byte("\n\n\n"))                                                     // empty lines
	f.Add([]byte(" "))                                                          // nothing at all
	f.Add(append([]byte("junk\n"), rec(2, 5)...))                               // damage before a good record
	f.Add(append(rec(3, 1), []byte("1234abcd 3 {}")...))                        // torn tail lookalike
	f.Add(bytes.Repeat([]byte{0xff}, 5000))                                     // binary garbage
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(logPath(dir), content, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadEvents(dir); err != nil {
			t.Fatalf("ReadEvents: %v", err)
		}
		s, err := Open(dir, Options{}, newClock(), nil)
		if s == nil {
			t.Fatalf("Open gave no store: %v", err)
		}
		defer s.Close()
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open: %v", err)
		}
		n := len(s.Events())
		write(t, s, event("after", 1, t0.Add(time.Minute)))
		closeStore(t, s)
		// Whatever was there, the store is clean now.
		s, err = Open(dir, Options{}, newClock(), nil)
		if err != nil {
			t.Fatalf("second Open: %v", err)
		}
		defer s.Close()
		if got := len(s.Events()); got != n+1 && got != n {
			t.Fatalf("second Open: %d events, want %d or %d", got, n, n+1)
		}
	})
}

// FuzzScanLog checks the replay's bookkeeping on arbitrary bytes, in memory
// and so much faster than FuzzOpen.
func FuzzScanLog(f *testing.F) {
	line, err := encodeRecord(event(name(0), 1, t0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(line)
	f.Add(append(bytes.Clone(line), line[:9]...))
	f.Add(append([]byte("x\n"), line...))
	f.Fuzz(func(t *testing.T, content []byte) {
		r, err := scanLog(bytes.NewReader(content))
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(content))
		switch {
		case r.good < 0 || r.good > size:
			t.Fatalf("good offset %d outside [0, %d]", r.good, size)
		case r.bad < 0 && r.good != size:
			t.Fatalf("no damage but only %d of %d bytes good", r.good, size)
		case r.bad >= 0 && r.bad != r.good:
			t.Fatalf("first damage at %d, good data ends at %d", r.bad, r.good)
		case r.liveBytes < 0 || r.liveBytes > size:
			t.Fatalf("live bytes %d of %d", r.liveBytes, size)
		}
		for k, e := range r.live {
			if e.off < 0 || e.size < 2 || e.off+e.size > size {
				t.Fatalf("entry %q at [%d, +%d) outside the %d bytes", k, e.off, e.size, size)
			}
			ev, err := decodeRecord(content[e.off : e.off+e.size-1])
			if err != nil || k != eventKey(ev) || ev.Name == "" {
				t.Fatalf("entry %q points at a record that does not hold it: %v", k, err)
			}
		}
	})
}
