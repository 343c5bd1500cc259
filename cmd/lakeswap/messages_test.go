package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// goSyntax is what Go prints of a value a message should have put in
// words: a slice ([shop daily_sales]), a map, a pointer, a nil, a bad verb.
var goSyntax = regexp.MustCompile(`%!|<nil>|map\[|&\{|\b0xc0|\[\]|\[[A-Za-z0-9_.]+( [A-Za-z0-9_.]+)+\]`)

// messages collects, over every test of the package, the lines lakeswap
// printed in Go's syntax.
var messages struct {
	sync.Mutex
	runs int
	bad  []string
}

// checkMessages is textWritten in the tests: every line a run printed,
// on stderr and on stdout unless it printed JSON, is checked.
func checkMessages(args []string, stdout, stderr []byte) {
	texts := []string{string(stderr)}
	if !slices.Contains(args, "json") {
		texts = append(texts, string(stdout))
	}
	messages.Lock()
	defer messages.Unlock()
	messages.runs++
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			if goSyntax.MatchString(line) {
				messages.bad = append(messages.bad, fmt.Sprintf("lakeswap %s: %s", strings.Join(args, " "), line))
			}
		}
	}
}

// reportMessages fails the test run when any message was in Go's syntax.
func reportMessages() int {
	messages.Lock()
	defer messages.Unlock()
	fmt.Fprintf(os.Stderr, "%d runs' messages checked for Go syntax, %d lines in it\n", messages.runs, len(messages.bad))
	for _, b := range messages.bad {
		fmt.Fprintln(os.Stderr, "FAIL: message in Go syntax:", b)
	}
	if len(messages.bad) > 0 {
		return 1
	}
	return 0
}
