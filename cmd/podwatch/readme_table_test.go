package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// describedAsInHelp are the flags whose row in the flag table in docs/flags.md
// must open with --help's own description (up to its first ";"): the two
// the docs and --help once described differently. The other rows are
// summaries; they are held to the names and defaults below.
var describedAsInHelp = []string{"settle-delay", "file-check-frequency"}

// foreignFlags are other programs' flags the table mentions.
var foreignFlags = map[string]bool{
	"--hostname-override": true, // the kubelet's, read from --kubeadm-flags-file
}

// The flag table of docs/flags.md against the agent's flags:
// every flag it names exists, every flag is named (by a `--prefix-*` row
// at least), every default it states is the flag's, and a flag whose help
// says 0 means the default says so in the table with that default.
func TestReadmeFlagTableAgreesWithHelp(t *testing.T) {
	f := defaultFlags()
	fs := pflag.NewFlagSet("podwatch", pflag.ContinueOnError)
	f.AddFlags(fs)

	readme, err := os.ReadFile("../../docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n| flag | default | meaning |\n| --- | --- | --- |\n")
	if !ok {
		t.Fatal("docs/flags.md has no flag table (| flag | default | meaning |)")
	}
	var rows [][]string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) != 5 || cells[4] != "" {
			t.Fatalf("flag table row with %d cells, want 3: %s", len(cells)-2, line)
		}
		cells = cells[1:4]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 3 {
			t.Fatalf("flag table row with %d cells, want 3: %s", len(cells), line)
		}
		rows = append(rows, cells)
	}

	// lookup finds a flag by --name or -shorthand.
	lookup := func(name string) *pflag.Flag {
		if long, ok := strings.CutPrefix(name, "--"); ok {
			return fs.Lookup(long)
		}
		if len(name) == 2 {
			return fs.ShorthandLookup(name[1:])
		}
		return nil
	}
	flagRef := regexp.MustCompile("`(--?[a-z0-9-]+\\*?)`")
	named := map[string]bool{}
	nameFlags := func(cell string) []*pflag.Flag {
		var out []*pflag.Flag
		for _, m := range flagRef.FindAllStringSubmatch(cell, -1) {
			if prefix, ok := strings.CutSuffix(m[1], "*"); ok {
				n := 0
				fs.VisitAll(func(fl *pflag.Flag) {
					if strings.HasPrefix("--"+fl.Name, prefix) {
						named[fl.Name] = true
						n++
					}
				})
				if n == 0 {
					t.Errorf("flag table: %s matches no flag", m[1])
				}
				continue
			}
			if foreignFlags[m[1]] {
				continue
			}
			fl := lookup(m[1])
			if fl == nil {
				t.Errorf("flag table: %s is not a flag of the agent", m[1])
				continue
			}
			named[fl.Name] = true
			out = append(out, fl)
		}
		return out
	}

	for _, row := range rows {
		own := distinct(nameFlags(row[0]))
		nameFlags(row[2])
		if len(own) != 1 {
			continue // a row for several flags states no one default
		}
		fl := own[0]
		switch def := row[1]; {
		case def == "":
			if fl.DefValue != "" {
				t.Errorf("flag table: --%s shows no default; --help says %q", fl.Name, fl.DefValue)
			}
		case regexp.MustCompile("^`[^`]*`$").MatchString(def):
			checkDefault(t, fl, strings.Trim(def, "`"))
		}
		usage, cell := fl.Usage, strings.ReplaceAll(row[2], "`", "")
		if strings.Contains(usage, "0 means the default") {
			_, after, ok := strings.Cut(cell, "0 means the default, ")
			if d, _, _ := strings.Cut(after, " "); !ok {
				t.Errorf("flag table: --%s does not say that 0 means the default, as --help does", fl.Name)
			} else {
				checkDefault(t, fl, strings.TrimRight(d, ",;"))
			}
		} else if strings.Contains(cell, "0 means the default") {
			t.Errorf("flag table: --%s says 0 means the default; --help does not", fl.Name)
		}
		for _, name := range describedAsInHelp {
			if name != fl.Name {
				continue
			}
			want, _, _ := strings.Cut(usage, ";")
			want = strings.ToLower(want[:1]) + want[1:]
			if !strings.HasPrefix(cell, want) {
				t.Errorf("flag table: --%s reads %q; it must open with --help's %q", fl.Name, cell, want)
			}
		}
	}
	// Defaults given beside a flag in a row's text: "`--flag` (`value`" and
	// "`--a` and `--b` (both `value`".
	for _, row := range rows {
		for _, m := range regexp.MustCompile("`(--[a-z0-9-]+)` \\(`([^`]+)`").FindAllStringSubmatch(row[2], -1) {
			if fl := lookup(m[1]); fl != nil {
				checkDefault(t, fl, m[2])
			}
		}
		for _, m := range regexp.MustCompile("`(--[a-z0-9-]+)` and `(--[a-z0-9-]+)` \\(both `([^`]+)`").FindAllStringSubmatch(row[2], -1) {
			for _, name := range m[1:3] {
				if fl := lookup(name); fl != nil {
					checkDefault(t, fl, m[3])
				}
			}
		}
	}
	fs.VisitAll(func(fl *pflag.Flag) {
		if !named[fl.Name] {
			t.Errorf("flag table: --%s is not named in it", fl.Name)
		}
	})
	for _, name := range describedAsInHelp {
		if fs.Lookup(name) == nil {
			t.Errorf("describedAsInHelp: no flag --%s", name)
		}
	}
}

// checkDefault compares a default the table states with the flag's,
// durations by value (the table writes 10m where --help prints 10m0s).
func checkDefault(t *testing.T, fl *pflag.Flag, readme string) {
	t.Helper()
	if fl.Value.Type() == "duration" {
		want, err1 := time.ParseDuration(fl.DefValue)
		got, err2 := time.ParseDuration(readme)
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("flag table: --%s default %q; --help says %s", fl.Name, readme, fl.DefValue)
		}
		return
	}
	if readme != fl.DefValue {
		t.Errorf("flag table: --%s default %q; --help says %q", fl.Name, readme, fl.DefValue)
	}
}

func distinct(fls []*pflag.Flag) []*pflag.Flag {
	var out []*pflag.Flag
	seen := map[*pflag.Flag]bool{}
	for _, fl := range fls {
		if !seen[fl] {
			seen[fl] = true
			out = append(out, fl)
		}
	}
	return out
}
