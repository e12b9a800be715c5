package main

import (
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/diff"
)

// $PODWATCH_ENGINE selects the engine the agent runs; a name neither
// engine has is refused, not taken as the default.
func TestEngineFromEnvironment(t *testing.T) {
	t.Setenv("NODE_NAME", "node-1")
	for env, want := range map[string]diff.Engine{"": diff.EnginePort, "port": diff.EnginePort, "catalogue": diff.EngineCatalogue} {
		t.Setenv(engineEnv, env)
		f := defaultFlags()
		f.Agent.NodeName = "node-1"
		f.Validate() //nolint:errcheck // other options may not validate here; the engine is set first
		if f.Agent.Engine != want {
			t.Errorf("$%s=%q: engine %q, want %q", engineEnv, env, f.Agent.Engine, want)
		}
	}
	t.Setenv(engineEnv, "races")
	f := defaultFlags()
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), engineEnv) {
		t.Errorf("$%s=races: error %v, want one naming the variable", engineEnv, err)
	}
}
