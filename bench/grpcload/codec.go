// The codec both sides use: a message is its raw bytes, so no .proto file, no protoc and
// no generated code are needed, and neither side spends time on protobuf (what is measured
// is the HTTP/2 and gRPC framing, and the proxy between). Named "proto" so the content-type
// on the wire is application/grpc+proto, what a real protobuf service sends.
package main

import "fmt"

// frame is one gRPC message's payload.
type frame struct{ b []byte }

type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
	}
	return f.b, nil
}

// Unmarshal copies: gRPC may reuse the buffer it hands in once this returns.
func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("raw codec: cannot unmarshal into %T", v)
	}
	f.b = append(f.b[:0], data...)
	return nil
}
