package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/types"
)

// Output formats of the stream sink.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// errRepeatHeld is what a StreamSink returns for a text line it held back:
// the Recorder counts the occurrence as coalesced, not as a failure.
var errRepeatHeld = errors.New("events: repeat held back")

// StreamSink writes Event writes as lines: JSON (a v1 Event as kubectl get
// event -o json shows it), one per occurrence, or readable text. Text goes
// to a journal that people read, where an ongoing problem reported at every
// relist would drown the rest, while a change missing from it would leave a
// false last word on its pod. So in text every occurrence of a change (any
// reason but a problem's, see types.IsProblem) is printed, and a problem's
// line is printed when its Event is new, its message changed or a change was
// printed since its last line, and otherwise at most once per repeat
// interval, with the count reached.
type StreamSink struct {
	w      io.Writer
	format string
	repeat time.Duration // text only; not positive: every occurrence
	clk    clock.PassiveClock

	mu        sync.Mutex
	printed   map[string]printedLine // problems, by namespace/name of the Event
	changes   uint64                 // change lines printed so far
	lastSweep time.Time
}

// printedLine is the last text line printed for one problem's Event.
type printedLine struct {
	at      time.Time
	message string
	// changes is StreamSink.changes when the line was printed. A change
	// since then may be the problem's fix (the ADD of a file whose typo was
	// fixed, on the pod, while the InvalidManifest is on the node), so the
	// problem's next line is said again after it rather than held back
	// behind a line that says the opposite.
	changes uint64
}

// NewStreamSink returns a sink writing format (OutputText or OutputJSON) to
// w. In text, a problem's Event whose message stays the same is printed
// again at most once per repeat (0: DefaultTextRepeatInterval; negative:
// every occurrence), as told by clk (nil: the real clock).
func NewStreamSink(w io.Writer, format string, repeat time.Duration, clk clock.PassiveClock) (*StreamSink, error) {
	if format != OutputText && format != OutputJSON {
		return nil, fmt.Errorf("events: unknown output format %q (want %s or %s)", format, OutputText, OutputJSON)
	}
	if repeat == 0 {
		repeat = DefaultTextRepeatInterval
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &StreamSink{w: w, format: format, repeat: repeat, clk: clk, printed: map[string]printedLine{}}, nil
}

// Write implements Sink.
func (s *StreamSink) Write(_ context.Context, ev *v1.Event, _ bool) error {
	var line []byte
	if s.format == OutputJSON {
		b, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("events: encode %s: %w", ev.Name, err)
		}
		line = append(b, '\n')
	} else {
		if !s.due(ev) {
			return errRepeatHeld
		}
		line = []byte(FormatText(ev))
	}
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("events: write %s: %w", ev.Name, err)
	}
	return nil
}

// due reports whether the text line of ev is to be printed now, and if so
// notes it as printed.
func (s *StreamSink) due(ev *v1.Event) bool {
	if s.repeat <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !types.IsProblem(ev.Reason) {
		s.changes++
		return true
	}
	now := s.clk.Now()
	s.sweep(now)
	id := ev.Namespace + "/" + ev.Name
	last, ok := s.printed[id]
	if ok && last.message == ev.Message && last.changes == s.changes && now.Sub(last.at) < s.repeat {
		return false
	}
	s.printed[id] = printedLine{at: now, message: ev.Message, changes: s.changes}
	return true
}

// sweep forgets, once per repeat interval, the Events printed longer ago
// than that: their next line is due anyway, so remembering them would only
// grow the map with every Event ever printed.
func (s *StreamSink) sweep(now time.Time) {
	if now.Sub(s.lastSweep) < s.repeat {
		return
	}
	s.lastSweep = now
	for id, p := range s.printed {
		if now.Sub(p.at) >= s.repeat {
			delete(s.printed, id)
		}
	}
}

// FormatText renders an Event as one readable line.
func FormatText(ev *v1.Event) string {
	obj := strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
	if ev.InvolvedObject.Namespace != "" {
		obj = ev.InvolvedObject.Namespace + "/" + obj
	}
	return fmt.Sprintf("%s %-7s %-22s %s (x%d): %s\n",
		ev.LastTimestamp.UTC().Format(time.RFC3339), ev.Type, ev.Reason, obj, ev.Count, ev.Message)
}
