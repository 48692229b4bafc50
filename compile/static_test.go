package compile

import (
	"slices"
	"testing"
)

// TestStaticTags checks that pipegen build's tags keep those GOFLAGS
// sets, which the go command would drop for the command line's.
func TestStaticTags(t *testing.T) {
	for _, c := range []struct{ goflags, want string }{
		{"", "netgo,osusergo"},
		{"-ldflags=-s", "netgo,osusergo"},
		{"-ldflags=-s -tags=prod,fast", "prod,fast,netgo,osusergo"},
		{"--tags=netgo -mod=mod", "netgo,osusergo"},
		{"-tags=osusergo,netgo", "osusergo,netgo"},
	} {
		if got, want := staticTags(c.goflags), []string{"-tags", c.want}; !slices.Equal(got, want) {
			t.Errorf("staticTags(%q) = %q, want %q", c.goflags, got, want)
		}
	}
}
