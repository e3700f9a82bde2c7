package remotebench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The raw-TCP baseline: the same two workloads between the same two
// processes over plain TCP sockets on loopback, with TCP_NODELAY and the
// same 64-byte payload, no framework. It is the machine's limit for the
// remote rows.
//
// The client opens two connections and writes one byte first on each: 'p'
// for ping-pong (the peer echoes every 64-byte payload back), 'o' for
// one-way (a run starts with an 8-byte big-endian count n; the peer reads n
// payloads and writes its count back, 8 bytes, every AckEvery payloads and
// at the n-th). The one-way sender writes through a 64 KiB buffered writer
// and flushes before it waits for acknowledgements, as a framework's
// batching writer does.
//
// The raw-proto baseline (ImplRawProto) is the same with the framework's
// codec work and nothing else: every payload is a wrapperspb.BytesValue,
// marshaled by the sending goroutine behind a uvarint length, and the peer's
// reading goroutine unmarshals each into a new message before it counts it
// (ping-pong: the peer decodes the message and encodes it back, the client
// decodes the answer). There is no queue, no second goroutine and no
// envelope on either side: it is the floor of a remote one-way message that
// arrives as a new protobuf object, which is what every framework's receiver
// delivers. Its modes are 'P' and 'O'.

const (
	rawModePing        = 'p'
	rawModeOneWay      = 'o'
	rawModeProtoPing   = 'P'
	rawModeProtoOneWay = 'O'
	// rawDialLimit bounds a dial to the peer.
	rawDialLimit = 30 * time.Second
)

// serveRaw accepts connections on loopback until stop returns, then closes
// the listener and every connection and waits for their goroutines.
func serveRaw(announce func(PeerInfo) error, stop func()) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("remotebench: raw listen: %w", err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() { _ = serveRawConn(conn) })
		}
	})
	err = announce(PeerInfo{Address: ln.Addr().String(), Sink: "raw-sink", Echo: "raw-echo"})
	if err == nil {
		stop()
	}
	_ = ln.Close()
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	wg.Wait()
	return err
}

// serveRawConn serves one client connection in the mode its first byte names.
func serveRawConn(conn net.Conn) error {
	if tc, ok := conn.(*net.TCPConn); ok {
		if err := tc.SetNoDelay(true); err != nil {
			return err
		}
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	mode, err := r.ReadByte()
	if err != nil {
		return err
	}
	buf := make([]byte, PayloadSize)
	switch mode {
	case rawModeProtoPing:
		return serveRawProtoPing(conn, r)
	case rawModeProtoOneWay:
		return serveRawProtoOneWay(conn, r)
	case rawModePing:
		for {
			if _, err := io.ReadFull(r, buf); err != nil {
				return err
			}
			if _, err := conn.Write(buf); err != nil {
				return err
			}
		}
	case rawModeOneWay:
		var hdr [8]byte
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return err
			}
			n := binary.BigEndian.Uint64(hdr[:])
			for count := uint64(1); count <= n; count++ {
				if _, err := io.ReadFull(r, buf); err != nil {
					return err
				}
				if count%AckEvery == 0 || count == n {
					binary.BigEndian.PutUint64(hdr[:], count)
					if _, err := conn.Write(hdr[:]); err != nil {
						return err
					}
				}
			}
		}
	default:
		return fmt.Errorf("%w: raw mode %q", ErrPeer, mode)
	}
}

// rawClient is the measuring side of the raw-TCP and raw-proto baselines.
type rawClient struct {
	codec        bool // raw-proto: protobuf messages, framed by length
	in           *bufio.Reader
	frame        []byte // the client's encoding buffer (raw-proto)
	ping, oneway net.Conn
	out          *bufio.Writer // oneway's writer
	acks         chan int64    // the one-way connection's counts, from ackLoop
	ackErr       chan error
	wg           sync.WaitGroup
}

func newRawClient(peer PeerInfo, codec bool) (*rawClient, error) {
	pingMode, oneWayMode := byte(rawModePing), byte(rawModeOneWay)
	if codec {
		pingMode, oneWayMode = rawModeProtoPing, rawModeProtoOneWay
	}
	dial := func(mode byte) (net.Conn, error) {
		conn, err := net.DialTimeout("tcp", peer.Address, rawDialLimit)
		if err != nil {
			return nil, fmt.Errorf("remotebench: raw dial: %w", err)
		}
		if err := conn.(*net.TCPConn).SetNoDelay(true); err != nil {
			_ = conn.Close()
			return nil, err
		}
		if _, err := conn.Write([]byte{mode}); err != nil {
			_ = conn.Close()
			return nil, err
		}
		return conn, nil
	}
	ping, err := dial(pingMode)
	if err != nil {
		return nil, err
	}
	oneway, err := dial(oneWayMode)
	if err != nil {
		_ = ping.Close()
		return nil, err
	}
	c := &rawClient{codec: codec, in: bufio.NewReaderSize(ping, 64<<10), ping: ping, oneway: oneway, out: bufio.NewWriterSize(oneway, 64<<10),
		acks: make(chan int64, 64), ackErr: make(chan error, 1)}
	c.wg.Go(c.ackLoop)
	return c, nil
}

// ackLoop reads the peer's one-way counts until the connection closes.
func (c *rawClient) ackLoop() {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(c.oneway, hdr[:]); err != nil {
			c.ackErr <- err
			close(c.acks)
			return
		}
		c.acks <- int64(binary.BigEndian.Uint64(hdr[:]))
	}
}

// OneWay implements Client.
func (c *rawClient) OneWay(n int) (int, error) {
	if n < 1 {
		return 0, ErrBadSize
	}
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(n))
	if _, err := c.out.Write(hdr[:]); err != nil {
		return 0, err
	}
	msg, pm := payload(), wrapperspb.Bytes(payload())
	var acked int64
	var werr error
	wait := func(sent, limit int64) error {
		if err := c.out.Flush(); err != nil {
			return err
		}
		t := time.NewTimer(stallLimit)
		defer t.Stop()
		for sent-acked >= limit {
			select {
			case v, ok := <-c.acks:
				if !ok {
					return fmt.Errorf("%w: connection closed: %w", ErrStalled, <-c.ackErr)
				}
				acked = max(acked, v)
			case <-t.C:
				return ErrStalled
			}
		}
		return nil
	}
	for sent := int64(0); sent < int64(n); sent++ {
		if sent-acked >= Window {
			if werr = wait(sent, Window); werr != nil {
				return int(acked), werr
			}
		}
		if c.codec {
			if msg, werr = c.encode(pm); werr != nil {
				return int(acked), werr
			}
		}
		if _, werr = c.out.Write(msg); werr != nil {
			return int(acked), werr
		}
	}
	if werr = wait(int64(n), 1); werr != nil {
		return int(acked), werr
	}
	return int(acked), nil
}

// PingPong implements Client.
func (c *rawClient) PingPong(n int, lat []time.Duration) (int, error) {
	if n < 1 || len(lat) < n {
		return 0, ErrBadSize
	}
	msg, in := payload(), make([]byte, PayloadSize)
	if err := c.ping.SetDeadline(time.Now().Add(stallLimit)); err != nil {
		return 0, err
	}
	if c.codec {
		return c.protoPingPong(n, lat)
	}
	last := time.Now()
	for i := range n {
		if _, err := c.ping.Write(msg); err != nil {
			return i, err
		}
		if _, err := io.ReadFull(c.ping, in); err != nil {
			return i, err
		}
		now := time.Now()
		lat[i] = now.Sub(last)
		last = now
	}
	return n, nil
}

// Close implements Client: it closes both connections and waits for the
// acknowledgement reader.
func (c *rawClient) Close(context.Context) error {
	err := errors.Join(c.ping.Close(), c.oneway.Close())
	c.wg.Wait()
	return err
}
