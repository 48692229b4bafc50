package runtime

import "github.com/pipegen/pipegen/runtime/version"

// GenVersion is the version of the contract between generated code and
// this package (see package version).
const GenVersion = version.Gen

// MinGenVersion is the oldest generated code this runtime still runs.
const MinGenVersion = version.MinGen

// EnforceVersion is a uint so that a negative difference of versions is a
// compile-time error.
type EnforceVersion = version.Enforce
