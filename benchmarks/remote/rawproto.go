package remotebench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The raw-proto baseline's codec (see rawtcp.go): a uvarint length, then
// the message's protobuf encoding.

// maxRawFrame bounds a raw-proto message the peer or client accepts.
const maxRawFrame = 1 << 20

// appendRawProto appends m's frame to dst.
func appendRawProto(dst []byte, m proto.Message) ([]byte, error) {
	dst = protowire.AppendVarint(dst, uint64(proto.Size(m)))
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(dst, m)
}

// readRawProto reads one frame from r into buf (grown as needed) and
// decodes it into a new BytesValue.
func readRawProto(r *bufio.Reader, buf *[]byte) (*wrapperspb.BytesValue, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > maxRawFrame {
		return nil, fmt.Errorf("%w: raw-proto frame of %d bytes", ErrPeer, n)
	}
	if uint64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	m := new(wrapperspb.BytesValue)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: raw-proto: %w", ErrPeer, err)
	}
	return m, nil
}

// serveRawProtoOneWay is the peer of a raw-proto one-way connection: runs
// of an 8-byte count n and n messages, each decoded into a new message and
// counted (a message with the wrong payload is an error), with a count
// written back every AckEvery messages and at the n-th.
func serveRawProtoOneWay(conn net.Conn, r *bufio.Reader) error {
	var hdr [8]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint64(hdr[:])
		for count := uint64(1); count <= n; count++ {
			m, err := readRawProto(r, &buf)
			if err != nil {
				return err
			}
			if len(m.GetValue()) != PayloadSize {
				return fmt.Errorf("%w: raw-proto payload of %d bytes", ErrPeer, len(m.GetValue()))
			}
			if count%AckEvery == 0 || count == n {
				binary.BigEndian.PutUint64(hdr[:], count)
				if _, err := conn.Write(hdr[:]); err != nil {
					return err
				}
			}
		}
	}
}

// serveRawProtoPing is the peer of a raw-proto ping-pong connection: every
// message is decoded and encoded back.
func serveRawProtoPing(conn net.Conn, r *bufio.Reader) error {
	var buf, out []byte
	for {
		m, err := readRawProto(r, &buf)
		if err != nil {
			return err
		}
		if out, err = appendRawProto(out[:0], m); err != nil {
			return err
		}
		if _, err := conn.Write(out); err != nil {
			return err
		}
	}
}

// encode is the client's frame of m, valid until the next call.
func (c *rawClient) encode(m proto.Message) ([]byte, error) {
	var err error
	c.frame, err = appendRawProto(c.frame[:0], m)
	return c.frame, err
}

// protoPingPong is PingPong of the raw-proto baseline.
func (c *rawClient) protoPingPong(n int, lat []time.Duration) (int, error) {
	msg := wrapperspb.Bytes(payload())
	var buf []byte
	last := time.Now()
	for i := range n {
		frame, err := c.encode(msg)
		if err != nil {
			return i, err
		}
		if _, err := c.ping.Write(frame); err != nil {
			return i, err
		}
		m, err := readRawProto(c.in, &buf)
		if err != nil {
			return i, err
		}
		if len(m.GetValue()) != PayloadSize {
			return i, fmt.Errorf("%w: raw-proto answer of %d bytes", ErrPeer, len(m.GetValue()))
		}
		now := time.Now()
		lat[i] = now.Sub(last)
		last = now
	}
	return n, nil
}
