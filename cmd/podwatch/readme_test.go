package main

import (
	"os"
	"strings"
	"testing"
)

// docs/flags.md's "All flags of the agent" block is what podwatch --help
// prints, so that a flag added, renamed or reworded cannot leave it stale.
// The --node-name default is the machine's name, which docs/flags.md gives as
// "(default: the hostname)".
func TestReadmeListsTheAgentFlags(t *testing.T) {
	t.Setenv("NODE_NAME", "the-node")
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var out strings.Builder
	if code := realMain([]string{"--help"}, &out, devnull); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	_, help, ok := strings.Cut(out.String(), "\nFlags:\n")
	if !ok {
		t.Fatalf("no Flags: section in --help:\n%s", out.String())
	}
	help = strings.Replace(help, `(default "the-node")`, "(default: the hostname)", 1)

	readme, err := os.ReadFile("../../docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## All flags of the agent\n\n```\n")
	if !ok {
		t.Fatal(`docs/flags.md has no "All flags of the agent" block`)
	}
	block, _, _ = strings.Cut(block, "```")
	if block != help {
		t.Errorf("docs/flags.md's flag block differs from podwatch --help; paste this in:\n%s", help)
	}
}
