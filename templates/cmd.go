package templates

// Cmd is the data of cmd.go.tmpl: the main package that `pipegen generate
// -cmd` writes next to a pipeline generated into the user's package.
type Cmd struct {
	Header  string // the generated-code header, lines ending in a newline
	Name    string // the pipeline's name
	PkgPath string // the user's package
	// Alias is the import name, when the package's name is not the last
	// element of its path (or is os); Qualifier is how main refers to it.
	Alias     string
	Qualifier string
	File      string // the generated file in the user's package
	Func      string // its entry point, Run<Name>
}
