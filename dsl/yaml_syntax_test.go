package dsl

import "testing"

// TestParseYAMLSyntaxErrorPositions: a malformed file is reported at the
// line of its problem, and at its column where the problem is one
// character. yaml.v3 gives no line for some problems and, for those its
// parser finds, the 0-based line where the enclosing mapping or list
// starts.
func TestParseYAMLSyntaxErrorPositions(t *testing.T) {
	const head = "version: 1\nname: x\n" // lines 1 and 2
	for _, tc := range []struct {
		name string
		src  string
		want want
	}{
		// Problems yaml.v3 reports without a line.
		{"control character", head + "sources:\n  - name: s\n  \x01 connector: file\n",
			want{"5:3", "malformed YAML: control characters are not allowed (U+0001)"}},
		{"control character on the first line", "version:\x7f 1\n",
			want{"1:9", "malformed YAML: control characters are not allowed (U+007F)"}},
		{"invalid UTF-8", head + "parallelism: \xff2\n",
			want{"3:14", "malformed YAML: invalid leading UTF-8 octet"}},
		{"invalid UTF-8 after a multi-byte character", head + "# é\nparallelism: é\xc3\n",
			want{"4:15", "malformed YAML: "}},
		{"unknown anchor", head + "parallelism: *n\n",
			want{"3:14", "malformed YAML: unknown anchor 'n' referenced"}},
		{"unknown anchor as a key", head + "sources:\n  - *name: s\n",
			want{"4:5", "malformed YAML: unknown anchor 'name' referenced"}},
		{"unknown anchor after a defined one", head + "parallelism: &p 2\nsources:\n  - name: *p\n  - name: *q\n",
			want{"6:11", "malformed YAML: unknown anchor 'q' referenced"}},

		// Problems yaml.v3's parser finds: it names the line before the
		// mapping or list they are in.
		{"list item among the keys", head + "sources: []\n- operators:\n",
			want{"4:1", "malformed YAML: did not find expected key"}},
		{"list item among the keys, after comments", "# a pipeline\n\n" + head + "sources: []\n- operators:\n",
			want{"6:1", "malformed YAML: did not find expected key"}},
		{"list item among a node's keys", head + "sources:\n  - name: s\n    connector: file\n    - path: in\n",
			want{"6:1", "malformed YAML: did not find expected key"}},
		{"key among list items", head + "sources:\n  - name: a\n  - name: b\n  x: 1\n",
			want{"6:1", "malformed YAML: did not find expected '-' indicator"}},
		{"unclosed list", head + "operators:\n  - name: u\n    inputs: [a, b\n    union: true\n",
			want{"5:1", "malformed YAML: did not find expected ',' or ']'"}},
		{"unclosed mapping", head + "\n\nparallelism: { n: 2\n",
			want{"5:1", "malformed YAML: did not find expected ',' or '}'"}},
		{"stray comma", head + "sources:\n  - name: s\n    path: ,\n",
			want{"5:1", "malformed YAML: did not find expected node content"}},

		// Problems of yaml.v3's scanner: the line it gives was right.
		{"indented key", head + "sources:\n  - name: lines\n    connector: file\n     path: input.txt\n",
			want{"6:1", "malformed YAML: mapping values are not allowed in this context"}},
		{"unclosed quote", head + "sources:\n  - name: s\n    path: \"in.txt\n",
			want{"5:1", "malformed YAML: found unexpected end of stream"}},
		{"unclosed quote on the first line", "name: \"x\nversion: 1\nsources: []\n",
			want{"1:1", "malformed YAML: found unexpected end of stream"}},
		{"tab", head + "sources:\n\t- name: s\n",
			want{"4:1", "malformed YAML: found character that cannot start any token"}},
		{"on the first line", "version: 1: 2\n",
			want{"1:1", "malformed YAML: mapping values are not allowed in this context"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := parse(t, tc.src)
			checkDiags(t, got, []want{tc.want})
		})
	}
}

// TestParseYAMLAlias: an alias is rejected as "an alias", not "a alias".
func TestParseYAMLAlias(t *testing.T) {
	_, got := parse(t, "version: 1\nname: &n x\nparallelism: *n\n")
	checkDiags(t, got, []want{{"3:14", "parallelism wants a single value, got an alias"}})
}
