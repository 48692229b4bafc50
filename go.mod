module github.com/pipegen/pipegen

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/dave/jennifer v1.7.1
	golang.org/x/tools v0.52.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
