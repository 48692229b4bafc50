package kafka

// genericBodies are instances of the connector's Source and Sink, whose
// methods, in generated code, call plain helpers at every record (the
// partition's end, the batch's failure). An instance here has all its
// methods compiled with this package, and those helpers inlined, which
// puts their bodies into this package's export data; without them a
// generated program called the helpers (runtime/inline.go says why).
// Nothing reads the values.
var genericBodies = []any{(*Source[[]byte])(nil), (*Sink[[]byte])(nil)}

var _ = genericBodies
