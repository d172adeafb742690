// grpcbench: the gRPC backend and load generator for bench/grpc.sh, in Go so that neither
// is the bottleneck when sluice is measured (a Python client would be). One binary, two
// subcommands: `serve` (an echo server) and `load` (unary calls from many goroutines,
// figures as one JSON line).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grpcbench serve|load [flags] (-h for the flags)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "grpcbench: unknown subcommand %q (serve or load)\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpcbench %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
