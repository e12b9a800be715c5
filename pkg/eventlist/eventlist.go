package eventlist

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
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/store"
)

// DefaultOptions read the agent's default state dir, printed wide.
func DefaultOptions(stateDir string) Options {
	return Options{StateDir: stateDir, Output: "wide"}
}

// Print reads the Events in o.StateDir's store, without locking it, and
// prints those o selects; it returns how many. A state dir that holds no
// store yet has none; a state dir that is missing, not a directory or
// unreadable is an error, since it is most likely a typo in --state-dir and
// "no events" would hide it.
func Print(w io.Writer, o Options, now time.Time) (int, error) {
	if err := checkStateDir(o.StateDir); err != nil {
		return 0, err
	}
	evs, err := store.ReadEvents(o.StateDir)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return 0, err
	}
	evs = Select(evs, o)
	if o.Output == "json" {
		return len(evs), WriteJSON(w, evs)
	}
	if len(evs) == 0 {
		return 0, nil
	}
	return len(evs), WriteWide(w, evs, now)
}

// checkStateDir reports a state dir that is missing, not a directory, or
// whose files this user may not reach, naming it: only then may a missing
// events.log mean that the agent has recorded nothing yet. It opens DIR/.
// with O_PATH: looking "." up needs the search (x) permission that reading
// any file in DIR needs, and O_PATH asks for nothing more, so a folder it
// may not list but may read events.log in still works. Without this check
// a folder it may not enter failed later, with an error about events.log.
func checkStateDir(dir string) error {
	fd, err := unix.Open(dir+"/.", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("state dir %s is not a directory", dir)
	case errors.Is(err, iofs.ErrNotExist):
		return fmt.Errorf("state dir %s: %w", dir, iofs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("state dir %s: %w", dir, err)
	}
	return unix.Close(fd)
}

// Options say which Events to print, and how.
type Options struct {
	StateDir string
	Output   string   // wide (default) or json
	For      string   // KIND/NAME, e.g. pod/etcd-node-1 or node/node-1
	Types    []string // Normal, Warning
}

// AddFlags registers the options as podwatch events' flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "podwatch's state folder")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "output format: wide or json (a v1 List of Events, as kubectl get events -o json prints)")
	fs.StringVar(&o.For, "for", o.For, "only events about this object, as KIND/NAME (pod/etcd-node-1, node/node-1)")
	fs.StringSliceVar(&o.Types, "types", o.Types, "only events of these types (Normal, Warning)")
}

// Validate reports every option that is wrong.
func (o *Options) Validate() error {
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

// Select filters and orders events as kubectl does: oldest last seen
// first, so the most recent is at the bottom of a terminal.
func Select(evs []v1.Event, o Options) []v1.Event {
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

// WriteWide prints the table of kubectl get events -o wide, with ages
// relative to now, and after the message the Event's detail
// (events.AnnotationDetail): what the message leaves out to be read at a
// glance.
func WriteWide(w io.Writer, evs []v1.Event, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tLAST SEEN\tTYPE\tREASON\tOBJECT\tCOUNT\tFIRST SEEN\tMESSAGE\tDETAIL")
	for _, ev := range evs {
		obj := strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", ev.Namespace, age(lastSeen(ev), now), ev.Type, ev.Reason,
			obj, ev.Count, age(ev.FirstTimestamp.Time, now), oneLine(ev.Message), oneLine(ev.Annotations[events.AnnotationDetail]))
	}
	return tw.Flush()
}

// WriteJSON prints evs as kubectl get events -o json does: a v1 List (kind
// List, not EventList, which is what kubectl prints too, so scripts written
// for one read the other).
func WriteJSON(w io.Writer, evs []v1.Event) error {
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
