package docs

import (
	"bufio"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/settings"
)

// keyTables maps the headings of dsl.md whose tables list keys (a table
// whose first column is "key" or "option") to where those keys are: the
// scopes and the section. A key table under another heading fails the
// test, so that a new one is added here; "### `connector: NAME`" lists
// the options of the connector NAME of the sources or sinks above it.
var keyTables = map[string]struct {
	scopes []settings.Scope
	prefix string
}{
	"## Top-level keys":                      {[]settings.Scope{settings.Pipeline}, ""},
	"### `checkpoint`":                       {[]settings.Scope{settings.Pipeline}, "checkpoint"},
	"### `restart`":                          {[]settings.Scope{settings.Pipeline}, "restart"},
	"### `state`":                            {[]settings.Scope{settings.Pipeline}, "state"},
	"### Keys of every node":                 {[]settings.Scope{settings.Source, settings.Operator, settings.Sink}, ""},
	"## Sources":                             {[]settings.Scope{settings.Source}, ""},
	"### `timestamps`":                       {[]settings.Scope{settings.Source}, "timestamps"},
	"## Operators":                           {[]settings.Scope{settings.Operator}, ""},
	"#### `aggregate`":                       {[]settings.Scope{settings.Operator}, "aggregate"},
	"#### `join`":                            {[]settings.Scope{settings.Operator}, "join"},
	"### Windows, lateness and side outputs": {[]settings.Scope{settings.Operator}, "window"},
	"### Triggers: early firings":            {[]settings.Scope{settings.Operator}, "trigger"},
	"## Sinks":                               {[]settings.Scope{settings.Sink}, ""},
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// TestKeysDocumented checks that the key tables of dsl.md list every key
// of the settings table, and no other.
func TestKeysDocumented(t *testing.T) {
	f, err := os.Open("dsl.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	documented := map[string]bool{}
	var section, heading string // the last ## heading, and the last heading
	inTable, keys := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			heading = line
			if strings.HasPrefix(line, "## ") {
				section = line
			}
		}
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(line, "|")
		first := strings.TrimSpace(cells[1])
		if !inTable { // the header
			inTable, keys = true, first == "key" || first == "option"
			if keys && !strings.HasPrefix(heading, "### `connector: ") {
				if _, ok := keyTables[heading]; !ok {
					t.Errorf("dsl.md: a key table under %q: add the heading to keyTables", heading)
				}
			}
			continue
		}
		if !keys {
			continue
		}
		for _, m := range backquoted.FindAllStringSubmatch(first, -1) {
			key := m[1]
			if conn, ok := strings.CutPrefix(heading, "### `connector: "); ok {
				scope := settings.Source
				if section == "## Sinks" {
					scope = settings.Sink
				}
				documented[scope.String()+" "+strings.TrimSuffix(conn, "`")+": "+key] = true
				continue
			}
			where := keyTables[heading]
			if where.prefix != "" {
				key = where.prefix + "." + key
			}
			for _, scope := range where.scopes {
				documented[scope.String()+" "+key] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	table := map[string]bool{}
	for _, scope := range []settings.Scope{settings.Pipeline, settings.Source, settings.Operator, settings.Sink} {
		for _, s := range settings.All(scope) {
			table[scope.String()+" "+s.Path] = true
		}
	}
	for _, scope := range []settings.Scope{settings.Source, settings.Sink} {
		for _, c := range settings.Connectors(scope) {
			for _, o := range c.Options {
				table[scope.String()+" "+c.Name+": "+o.Path] = true
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		if !documented[k] {
			t.Errorf("%s: in the settings table, but in no key table of dsl.md", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(documented)) {
		if !table[k] {
			t.Errorf("%s: in a key table of dsl.md, but not in the settings table", k)
		}
	}
}
