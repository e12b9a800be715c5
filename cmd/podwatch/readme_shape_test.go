package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The README is read by someone deciding whether to install podwatch: it
// stays short, in short paragraphs, and leaves the depth to docs/.
const (
	readmeMaxLines     = 250
	readmeMaxParagraph = 8
)

func TestReadmeIsShort(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move the depth to a page under docs/", len(lines), readmeMaxLines)
	}
	for _, p := range longParagraphs(lines, readmeMaxParagraph) {
		t.Errorf("README.md:%d: a paragraph of %d lines, want at most %d", p.line, p.length, readmeMaxParagraph)
	}
}

type paragraph struct{ line, length int }

// longParagraphs returns the runs of non-blank lines longer than max,
// outside code blocks, tables and headings, each by its first line (from 1).
func longParagraphs(lines []string, max int) []paragraph {
	var out []paragraph
	inCode := false
	start, n := 0, 0
	end := func() {
		if n > max {
			out = append(out, paragraph{start + 1, n})
		}
		n = 0
	}
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			end()
			inCode = !inCode
		case inCode, trimmed == "", strings.HasPrefix(trimmed, "|"), strings.HasPrefix(trimmed, "#"):
			end()
		default:
			if n == 0 {
				start = i
			}
			n++
		}
	}
	end()
	return out
}

func TestLongParagraphsFindsOnlyProse(t *testing.T) {
	lines := strings.Split("a\nb\nc\n\n```\n1\n2\n3\n4\n```\n| x |\n| y |\n| z |\nd\ne", "\n")
	got := longParagraphs(lines, 2)
	if len(got) != 1 || got[0] != (paragraph{1, 3}) {
		t.Errorf("longParagraphs = %v, want one of 3 lines at line 1", got)
	}
}

// Every relative link in the README and the pages under docs/ points at a
// file that exists, and a link to a heading (#anchor) at a heading that
// exists, so that moving a section cannot leave a reader at a dead end.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/*/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, rel)
		}
	}
	if len(pages) < 8 {
		t.Fatalf("found only %v: the docs pages are missing", pages)
	}
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range relativeLinks(string(text)) {
			target, anchor, _ := strings.Cut(link, "#")
			file := filepath.Join(root, page)
			if target != "" {
				file = filepath.Join(root, filepath.Dir(page), target)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s: link %q: %v", page, link, err)
				continue
			}
			if anchor == "" {
				continue
			}
			body, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, link, err)
				continue
			}
			if !hasAnchor(string(body), anchor) {
				t.Errorf("%s: link %q: no heading with that anchor in %s", page, link, file)
			}
		}
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan = regexp.MustCompile("`[^`\n]*`")
)

// relativeLinks returns the targets of the Markdown links in text that are
// neither absolute URLs nor inside code.
func relativeLinks(text string) []string {
	var out []string
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, ""), -1) {
			if strings.Contains(m[1], "://") || strings.HasPrefix(m[1], "mailto:") {
				continue
			}
			out = append(out, m[1])
		}
	}
	return out
}

// hasAnchor says whether a heading of text has anchor as GitHub derives it:
// lowercased, punctuation other than - and _ dropped, spaces as hyphens.
func hasAnchor(text, anchor string) bool {
	for _, l := range strings.Split(text, "\n") {
		title, ok := strings.CutPrefix(l, "#")
		if !ok {
			continue
		}
		title = strings.TrimSpace(strings.TrimLeft(title, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-', r == '_', unicode.IsLetter(r), unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}

func TestHasAnchorAsGitHub(t *testing.T) {
	text := "# x\n## The kubelet's relist\n### `podwatch events`\n"
	for anchor, want := range map[string]bool{"the-kubelets-relist": true, "podwatch-events": true, "relist": false} {
		if got := hasAnchor(text, anchor); got != want {
			t.Errorf("hasAnchor(%q) = %v, want %v", anchor, got, want)
		}
	}
}
