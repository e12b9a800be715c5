package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/diff"
)

func TestSaveLoadJSONRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "created")
	want := diff.State{
		Pods: map[string]*diff.PodState{"kube-system/etcd-node-1": {
			File: "etcd.yaml", Hash: "abc", UID: "u1", JSON: json.RawMessage(`{"metadata":{"name":"etcd"}}`),
		}},
		Pending:  map[string]time.Time{"remove/x": t0},
		Reported: map[string]string{"dup/y": "two files"},
	}
	if err := SaveJSON(dir, "state.json", want); err != nil {
		t.Fatal(err)
	}
	var got diff.State
	if err := LoadJSON(dir, "state.json", &got); err != nil {
		t.Fatal(err)
	}
	if got.Pods["kube-system/etcd-node-1"].Hash != "abc" || !got.Pending["remove/x"].Equal(t0) ||
		got.Reported["dup/y"] != "two files" || string(got.Pods["kube-system/etcd-node-1"].JSON) != `{"metadata":{"name":"etcd"}}` {
		t.Errorf("LoadJSON = %+v, want %+v", got, want)
	}
	// Replaced, not merged.
	if err := SaveJSON(dir, "state.json", diff.State{Reported: map[string]string{"z": "z"}}); err != nil {
		t.Fatal(err)
	}
	if err := LoadJSON(dir, "state.json", &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Pods) != 0 || len(got.Reported) != 1 {
		t.Errorf("second LoadJSON merged into the old value: %+v", got)
	}
	fi, err := os.Stat(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}
	onlyFiles(t, dir, "state.json")
}

func TestLoadJSONMissing(t *testing.T) {
	var v diff.State
	err := LoadJSON(t.TempDir(), "state.json", &v)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadJSON of a missing file = %v, want fs.ErrNotExist", err)
	}
}

func TestLoadJSONCorruptIsSetAside(t *testing.T) {
	for tc, content := range map[string]string{
		"truncated":   `{"pods":{"kube-system/x":{"file":"x.yaml","hash":"secret-value`,
		"garbage":     "\x00\x01\x02 not json",
		"wrong shape": `{"pods":["secret-value"]}`,
		"empty":       "",
		"trailing":    `{} {}`,
	} {
		t.Run(tc, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			v := diff.State{Reported: map[string]string{"kept": "on error"}}
			err := LoadJSON(dir, "state.json", &v)
			var cerr *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &cerr) {
				t.Fatalf("LoadJSON = %v, want a CorruptError", err)
			}
			if strings.Contains(err.Error(), "secret-value") {
				t.Errorf("error quotes the file: %v", err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "set aside as "+path+".corrupt-") {
				t.Errorf("error %q does not name the file and where it went", err)
			}
			if v.Reported["kept"] != "on error" {
				t.Errorf("v changed on error: %+v", v)
			}
			if got, err := os.ReadFile(cerr.SetAside); err != nil || string(got) != content {
				t.Errorf("set-aside file: %q, %v", got, err)
			}
			if err := LoadJSON(dir, "state.json", &v); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("LoadJSON after set-aside = %v, want fs.ErrNotExist", err)
			}
			// A second corruption in the same second keeps the first copy.
			if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
			var c2 *CorruptError
			if err := LoadJSON(dir, "state.json", &v); !errors.As(err, &c2) || c2.SetAside == cerr.SetAside {
				t.Errorf("second set-aside = %v, want a new name beside %s", err, cerr.SetAside)
			}
			if got, err := os.ReadFile(cerr.SetAside); err != nil || string(got) != content {
				t.Errorf("first set-aside file overwritten: %q, %v", got, err)
			}
		})
	}
}

// TestSaveJSONIsAtomic loads while several writers replace the file: every
// load must see one whole value, never a mix, an empty file or an error.
func TestSaveJSONIsAtomic(t *testing.T) {
	dir := t.TempDir()
	big := func(w, i int) map[string]string {
		m := map[string]string{"writer": strconv.Itoa(w), "seq": strconv.Itoa(i)}
		for k := range 200 {
			m[fmt.Sprintf("key-%03d", k)] = strings.Repeat(strconv.Itoa(w), 50)
		}
		return m
	}
	if err := SaveJSON(dir, "state.json", big(0, 0)); err != nil {
		t.Fatal(err)
	}
	const writers, saves = 3, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	done := make(chan struct{})
	for w := 1; w <= writers; w++ {
		wg.Go(func() {
			for i := range saves {
				if err := SaveJSON(dir, "state.json", big(w, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	loads := 0
	deadline := time.Now().Add(time.Minute)
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("writers did not finish within a minute")
		}
		var m map[string]string
		if err := LoadJSON(dir, "state.json", &m); err != nil {
			t.Fatalf("load %d: %v", loads, err)
		}
		loads++
		w := m["writer"]
		for k, v := range m {
			if k != "writer" && k != "seq" && v != strings.Repeat(w, 50) {
				t.Fatalf("load %d mixes writers: %s=%q in writer %s's file", loads, k, v, w)
			}
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d loads during %d saves", loads, writers*saves)
	onlyFiles(t, dir, "state.json")
}

func TestJSONFileNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"", ".", "..", ".hidden", "a/b", "../x", "lock", "events.log", "events.log.corrupt-1"} {
		if err := SaveJSON(dir, n, 1); err == nil {
			t.Errorf("SaveJSON accepted name %q", n)
		}
		var v int
		if err := LoadJSON(dir, n, &v); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("LoadJSON(%q) = %v, want a name error", n, err)
		}
	}
	var v int
	if err := LoadJSON(dir, "x.json", v); err == nil {
		t.Error("LoadJSON accepted a non-pointer")
	}
	if err := SaveJSON(dir, "x.json", func() {}); err == nil {
		t.Error("SaveJSON of a func succeeded")
	}
	onlyFiles(t, dir)
}

// onlyFiles fails if dir holds anything but names: no temp file is left.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("dir holds %v, want %v", got, names)
	}
}
