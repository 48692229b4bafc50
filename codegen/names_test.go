package codegen

import (
	"slices"
	"testing"
)

func TestNamer(t *testing.T) {
	user := []string{"pipegenWcConfig", "state"}
	pkg := newNamer("pipegenWc", func(name string) bool { return slices.Contains(user, name) }, nil)
	orders := nameKey{pattern: "new%sChain", of: "orders"}
	newOrders := nameKey{pattern: "%sChain", of: "new-orders"}
	locals := newNamer("", nil, pkg)
	for _, tc := range []struct{ got, want string }{
		{pkg.name(nameKey{pattern: "config"}, "config"), "pipegenWcConfig2"}, // the user's
		{pkg.name(orders, derive("new%sChain", "orders")), "pipegenWcNewOrdersChain"},
		{pkg.name(newOrders, derive("%sChain", "newOrders")), "pipegenWcNewOrdersChain2"}, // another thing, one name
		{pkg.name(orders, "anything"), "pipegenWcNewOrdersChain"},                         // the same thing, the same name
		{pkg.importName("example.com/state", "state"), "state2"},                          // no prefix
		{pkg.importName("example.com/other/state", "state"), "state3"},
		{locals.name(nameKey{of: "x"}, "pipegenWcNewOrdersChain"), "pipegenWcNewOrdersChain3"}, // hides nothing outside
		{locals.name(nameKey{of: "step1"}, "step1"), "step1"},
		{locals.name(nameKey{of: "step-1"}, "step1"), "step1_2"},
		{derive("to%sLeft", "byUser"), "toByUserLeft"},
		{derive("%sTo%s", "words", "counts"), "wordsToCounts"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}
