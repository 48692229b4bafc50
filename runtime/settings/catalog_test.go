package settings

import (
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/catalog"
)

// TestCatalogAgrees checks that the connectors here are runtime/catalog's,
// which the runtime reads until it is switched over to this package. Delete
// the test with runtime/catalog.
func TestCatalogAgrees(t *testing.T) {
	for _, old := range catalog.Connectors {
		scope := Source
		if old.Role == catalog.SinkRole {
			scope = Sink
		}
		c := LookupConnector(scope, old.Name)
		if c == nil {
			t.Errorf("%s %s: missing", old.Role, old.Name)
			continue
		}
		if !slices.Equal(c.OptionNames(), old.OptionNames()) {
			t.Errorf("%s %s: options %v, catalog %v", old.Role, old.Name, c.OptionNames(), old.OptionNames())
		}
		for _, o := range old.Options {
			n := c.Option(o.Name)
			if n == nil || n.Default != o.Default || n.Required != o.Required || n.Static != o.Static ||
				!slices.Equal(n.Values, o.Values) || !slices.Equal(n.Formats, o.Formats) {
				t.Errorf("%s %s option %s: %+v, catalog %+v", old.Role, old.Name, o.Name, n, o)
			}
		}
	}
	if len(connectors) != len(catalog.Connectors) {
		t.Errorf("%d connectors, catalog %d", len(connectors), len(catalog.Connectors))
	}
}
