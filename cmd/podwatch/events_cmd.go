package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/podwatch/podwatch/pkg/store"
)

const eventsUsage = `Prints the events in podwatch's local store, like kubectl get events -o wide.
Works while the agent runs.

Usage:
  podwatch events [flags]

Flags:
`

// runEvents is podwatch events: it reads the local store without locking
// it, so it works while the agent runs. Exit 0, 1 on a store it cannot read,
// 2 on usage errors.
func runEvents(args []string, stdout, stderr io.Writer, now time.Time) int {
	o := eventsOptions{StateDir: DefaultStateDir, Output: "wide"}
	fs := pflag.NewFlagSet("podwatch events", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, eventsUsage)
		fs.PrintDefaults()
	}
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return flagError(stderr, "podwatch events", err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podwatch events: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintln(stderr, "podwatch events:", err)
		return 2
	}
	evs, err := store.ReadEvents(o.StateDir)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		fmt.Fprintln(stderr, "podwatch events:", err)
		return 1
	}
	evs = selectEvents(evs, o)
	err = nil
	if o.Output == "json" {
		err = writeEventsJSON(stdout, evs)
	} else if len(evs) == 0 {
		fmt.Fprintf(stderr, "No events found in %s.\n", o.StateDir)
	} else {
		err = writeEventsWide(stdout, evs, now)
	}
	if err != nil {
		fmt.Fprintln(stderr, "podwatch events:", err)
		return 1
	}
	return 0
}

// eventsOptions are the flags of podwatch events.
type eventsOptions struct {
	StateDir string
	Output   string   // wide (default) or json
	For      string   // KIND/NAME, e.g. pod/etcd-node-1 or node/node-1
	Types    []string // Normal, Warning
}

func (o *eventsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "podwatch's state folder")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "output format: wide or json (a v1 EventList)")
	fs.StringVar(&o.For, "for", o.For, "only events about this object, as KIND/NAME (pod/etcd-node-1, node/node-1)")
	fs.StringSliceVar(&o.Types, "types", o.Types, "only events of these types (Normal, Warning)")
}

func (o *eventsOptions) Validate() error {
	var errs []error
	if o.Output != "wide" && o.Output != "json" {
		errs = append(errs, fmt.Errorf("--output %q: want wide or json", o.Output))
	}
	if o.For != "" {
		if kind, name, ok := strings.Cut(o.For, "/"); !ok || kind == "" || name == "" {
			errs = append(errs, fmt.Errorf("--for %q: want KIND/NAME, e.g. pod/etcd-node-1", o.For))
		}
	}
	for _, t := range o.Types {
		if t != v1.EventTypeNormal && t != v1.EventTypeWarning {
			errs = append(errs, fmt.Errorf("--types %q: want Normal or Warning", t))
		}
	}
	return errors.Join(errs...)
}

// selectEvents filters and orders events as kubectl does: oldest last seen
// first, so the most recent is at the bottom of a terminal.
func selectEvents(evs []v1.Event, o eventsOptions) []v1.Event {
	kind, name, _ := strings.Cut(o.For, "/")
	out := make([]v1.Event, 0, len(evs))
	for _, ev := range evs {
		if o.For != "" && (!strings.EqualFold(ev.InvolvedObject.Kind, kind) || ev.InvolvedObject.Name != name) {
			continue
		}
		if len(o.Types) > 0 && !contains(o.Types, ev.Type) {
			continue
		}
		out = append(out, ev)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := lastSeen(out[i]), lastSeen(out[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lastSeen(ev v1.Event) time.Time {
	if !ev.LastTimestamp.IsZero() {
		return ev.LastTimestamp.Time
	}
	return ev.FirstTimestamp.Time
}

// writeEventsWide prints the table of kubectl get events -o wide, with ages
// relative to now.
func writeEventsWide(w io.Writer, evs []v1.Event, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tLAST SEEN\tTYPE\tREASON\tOBJECT\tCOUNT\tFIRST SEEN\tMESSAGE")
	for _, ev := range evs {
		obj := strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", ev.Namespace, age(lastSeen(ev), now), ev.Type, ev.Reason,
			obj, ev.Count, age(ev.FirstTimestamp.Time, now), oneLine(ev.Message))
	}
	return tw.Flush()
}

func writeEventsJSON(w io.Writer, evs []v1.Event) error {
	list := v1.EventList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: evs}
	if list.Items == nil {
		list.Items = []v1.Event{}
	}
	for i := range list.Items {
		list.Items[i].APIVersion, list.Items[i].Kind = "v1", "Event"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(list)
}

func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
