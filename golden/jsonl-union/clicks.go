// Package clicks is the golden case of two jsonl sources merged by a union,
// a map that can fail, and an aggregate without a result function.
package clicks

import (
	"errors"
	"strings"
)

type Click struct {
	User string `json:"user"`
	Page string `json:"page"`
}

type Visit struct {
	User    string
	Section string
}

// ToVisit fails on a page outside the site.
func ToVisit(c Click) (Visit, error) {
	if !strings.HasPrefix(c.Page, "/") {
		return Visit{}, errors.New("page " + c.Page + " is not a path")
	}
	section, _, _ := strings.Cut(strings.TrimPrefix(c.Page, "/"), "/")
	return Visit{User: c.User, Section: section}, nil
}

func BySection(v Visit) string { return v.Section }

type Stats struct {
	Section string `json:"section"`
	Visits  int    `json:"visits"`
}

func AddVisit(s *Stats, v Visit) {
	s.Section = v.Section
	s.Visits++
}
