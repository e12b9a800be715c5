package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Output formats of the stream sink.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// StreamSink writes every Event write as one line: JSON (a v1 Event as
// kubectl get event -o json shows it) or readable text.
type StreamSink struct {
	w      io.Writer
	format string
}

// NewStreamSink returns a sink writing format (OutputText or OutputJSON) to w.
func NewStreamSink(w io.Writer, format string) (*StreamSink, error) {
	if format != OutputText && format != OutputJSON {
		return nil, fmt.Errorf("events: unknown output format %q (want %s or %s)", format, OutputText, OutputJSON)
	}
	return &StreamSink{w: w, format: format}, nil
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
		line = []byte(FormatText(ev))
	}
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("events: write %s: %w", ev.Name, err)
	}
	return nil
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
