// The load generator: -conns HTTP/2 connections, each with -concurrency unary calls in flight
// (one goroutine per call slot, each waiting for its answer before the next call), for a
// warm-up and then a measured window. It prints "measuring" when the window opens and
// "stopped" when it closes (the driver reads the proxy's CPU time at those two lines), then
// one JSON line: calls, errors, calls per second and latency percentiles of the calls that
// completed inside the window.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

const method = "/sluice.bench.Echo/Call"

type loadFlags struct {
	target      string
	conns       int
	concurrency int
	size        int
	warmup      time.Duration
	duration    time.Duration
	timeout     time.Duration
	tlsCA       string
	window      int
}

// phase of the run, read by every caller after each call.
const (
	warming int32 = iota
	measuring
	stopped
)

type result struct {
	Calls      int     `json:"calls"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"seconds"`
	CallsPerS  float64 `json:"calls_per_s"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
}

// caller is one call slot's own record: no locks on the hot path.
type caller struct {
	lat      []time.Duration
	errors   int
	firstErr error
}

func parseLoadFlags(args []string) (loadFlags, error) {
	var f loadFlags
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	fs.StringVar(&f.target, "target", "", "host:port of the server or proxy (required)")
	fs.IntVar(&f.conns, "conns", 4, "HTTP/2 connections")
	fs.IntVar(&f.concurrency, "concurrency", 16, "calls in flight on each connection")
	fs.IntVar(&f.size, "size", 64, "request (and so response) message bytes")
	fs.DurationVar(&f.warmup, "warmup", 2*time.Second, "calls before the measured window")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "the measured window")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "deadline of one call (a stall is an error)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM CA: call over TLS (ALPN h2, server name localhost)")
	fs.IntVar(&f.window, "window", 0, "static HTTP/2 stream and connection windows of this many bytes"+
		" (>= 65536), which turns off grpc-go's BDP estimation and its PINGs; 0: grpc-go's default")
	fs.Parse(args)
	if f.target == "" {
		return f, errors.New("-target is required")
	}
	if f.conns < 1 || f.concurrency < 1 || f.size < 0 || f.duration <= 0 {
		return f, errors.New("-conns and -concurrency must be >= 1, -size >= 0, -duration > 0")
	}
	if f.window != 0 && (f.window < 65536 || f.window > 1<<31-1) {
		return f, errors.New("-window must be 0 or from 65536 to 2^31-1")
	}
	return f, nil
}

func credentialsFor(f loadFlags) (grpc.DialOption, error) {
	if f.tlsCA == "" {
		return grpc.WithTransportCredentials(insecure.NewCredentials()), nil
	}
	pem, err := os.ReadFile(f.tlsCA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", f.tlsCA)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg)), nil
}

func load(args []string) error {
	f, err := parseLoadFlags(args)
	if err != nil {
		return err
	}
	creds, err := credentialsFor(f)
	if err != nil {
		return err
	}
	opts := []grpc.DialOption{creds, grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}))}
	if f.window != 0 {
		opts = append(opts, grpc.WithInitialWindowSize(int32(f.window)),
			grpc.WithInitialConnWindowSize(int32(f.window)))
	}
	conns := make([]*grpc.ClientConn, f.conns)
	for i := range conns {
		// Each ClientConn is its own HTTP/2 connection: gRPC does not share them.
		conns[i], err = grpc.NewClient("passthrough:///"+f.target, opts...)
		if err != nil {
			return err
		}
		defer conns[i].Close()
	}
	var phase atomic.Int32
	callers := make([]caller, f.conns*f.concurrency)
	var wg sync.WaitGroup
	for i := range callers {
		callers[i].lat = make([]time.Duration, 0, 1<<14)
		wg.Add(1)
		go func(c *caller, cc *grpc.ClientConn) {
			defer wg.Done()
			callLoop(c, cc, f, &phase)
		}(&callers[i], conns[i%f.conns])
	}
	time.Sleep(f.warmup)
	phase.Store(measuring)
	began := time.Now()
	fmt.Println("measuring")
	time.Sleep(f.duration)
	phase.Store(stopped)
	took := time.Since(began)
	fmt.Println("stopped")
	wg.Wait()
	return json.NewEncoder(os.Stdout).Encode(summarize(callers, took))
}

// callLoop makes calls until the run stops, recording those that complete while measuring.
func callLoop(c *caller, cc *grpc.ClientConn, f loadFlags, phase *atomic.Int32) {
	req := &frame{b: make([]byte, f.size)}
	for i := range req.b {
		req.b[i] = byte(i)
	}
	var resp frame
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
		err := cc.Invoke(ctx, method, req, &resp)
		cancel()
		took := time.Since(start)
		if err == nil && len(resp.b) != f.size {
			err = fmt.Errorf("answer of %d bytes to a request of %d", len(resp.b), f.size)
		}
		switch phase.Load() {
		case stopped:
			return
		case measuring:
			if err != nil {
				c.errors++
				if c.firstErr == nil {
					c.firstErr = err
				}
			} else {
				c.lat = append(c.lat, took)
			}
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond) // a failing target is not spun on
		}
	}
}

func summarize(callers []caller, took time.Duration) result {
	var r result
	var all []time.Duration
	for i := range callers {
		all = append(all, callers[i].lat...)
		r.Errors += callers[i].errors
		if r.FirstError == "" && callers[i].firstErr != nil {
			r.FirstError = callers[i].firstErr.Error()
		}
	}
	slices.Sort(all)
	r.Calls = len(all)
	r.Seconds = took.Seconds()
	r.CallsPerS = float64(r.Calls) / r.Seconds
	r.P50us = rank(all, 0.50)
	r.P99us = rank(all, 0.99)
	return r
}

// rank is the nearest-rank percentile q of sorted latencies, in microseconds (0 when none).
func rank(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i].Nanoseconds()) / 1e3
}
