// The backend: a gRPC server that answers every unary call on any method with the request's
// own bytes (an echo), over h2c or, with -tls-cert and -tls-key, over TLS with ALPN h2. It does
// no work of its own, so the figures are the transport's and the proxy's.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	cert := fs.String("tls-cert", "", "PEM certificate: serve over TLS (needs -tls-key)")
	key := fs.String("tls-key", "", "PEM private key for -tls-cert")
	fs.Parse(args)

	opts := []grpc.ServerOption{
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(echo),
		grpc.MaxConcurrentStreams(1024),
	}
	if *cert != "" || *key != "" {
		pair, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			return fmt.Errorf("loading -tls-cert/-tls-key: %w", err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}})))
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	// The driver reads the port from this line.
	fmt.Fprintf(os.Stdout, "listening on %s\n", ln.Addr())
	return grpc.NewServer(opts...).Serve(ln)
}

// echo answers one unary call (any service, any method) with the bytes it received.
func echo(_ any, stream grpc.ServerStream) error {
	var f frame
	if err := stream.RecvMsg(&f); err != nil {
		return err
	}
	return stream.SendMsg(&f)
}
