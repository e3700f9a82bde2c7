package remote

import (
	"encoding/binary"
	"fmt"
)

// cursor decodes the primitive fields of a frame body. It never reads past
// the end of b and never allocates more than the bytes it has; the first
// problem sticks in err and every later read returns a zero value.
//
// It moves an offset rather than re-slicing b: a read stores an integer,
// not a pointer, so the reads of a body cost no GC write barrier (a store
// of a slice through *cursor has one, and the collector runs often under a
// stream of decoded messages).
type cursor struct {
	b   []byte
	off int // the bytes not read yet are b[off:]
	err error
}

func (c *cursor) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

// left is the number of bytes not read yet.
func (c *cursor) left() int { return len(c.b) - c.off }

func (c *cursor) empty() bool { return c.left() == 0 }

func (c *cursor) byte1() byte {
	if c.err != nil {
		return 0
	}
	if c.off >= len(c.b) {
		c.fail("body ends before a byte field")
		return 0
	}
	v := c.b[c.off]
	c.off++
	return v
}

func (c *cursor) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b[c.off:])
	if n <= 0 {
		c.fail("bad uvarint")
		return 0
	}
	c.off += n
	return v
}

// bytesField returns a length-prefixed field aliasing the body; limit bounds
// its length (0 = only the body's remaining length bounds it).
func (c *cursor) bytesField(what string, limit int) []byte {
	n := c.uvarint()
	if c.err != nil {
		return nil
	}
	if n > uint64(c.left()) {
		c.fail("%s length %d exceeds the %d remaining bytes", what, n, c.left())
		return nil
	}
	if limit > 0 && n > uint64(limit) {
		c.fail("%s length %d exceeds its limit %d", what, n, limit)
		return nil
	}
	end := c.off + int(n)
	v := c.b[c.off:end:end]
	c.off = end
	return v
}

func (c *cursor) str(what string, limit int) string {
	return string(c.bytesField(what, limit))
}

// finish reports trailing bytes as malformed and returns the sticky error.
func (c *cursor) finish(what string) error {
	if c.err == nil && c.left() != 0 {
		c.fail("%d trailing bytes after %s", c.left(), what)
	}
	return c.err
}

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBytes(dst []byte, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// uvarintLen is the encoded size of v.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// stringLen is the encoded size of a length-prefixed field of n bytes.
func stringLen(n int) int { return uvarintLen(uint64(n)) + n }
