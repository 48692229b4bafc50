package main

// A module that has pipegen as a tool (`go get -tool
// github.com/pipegen/pipegen/cmd/pipegen`) records in go.mod and go.sum
// every module that the packages of the tool import, and go mod tidy
// keeps them. The compiler itself does not need the runtime, but the
// programs that pipegen build generates inside that module import it:
// importing here every package they may import makes the tool directive
// all a module needs. TestToolImportsTheRuntime keeps this list complete.
import (
	_ "github.com/pipegen/pipegen/runtime"
	_ "github.com/pipegen/pipegen/runtime/codec"
	_ "github.com/pipegen/pipegen/runtime/kafka"
	_ "github.com/pipegen/pipegen/runtime/pebblestate"
	_ "github.com/pipegen/pipegen/runtime/state"
	_ "github.com/pipegen/pipegen/runtime/textcodec"
)
