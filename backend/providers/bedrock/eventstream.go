package bedrock

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The application/vnd.amazon.eventstream framing of ConverseStream: each
// message is
//
//	total length (uint32 BE) | headers length (uint32 BE) | prelude CRC32 (of the 8 bytes before)
//	headers | payload | message CRC32 (of every byte before it)
//
// and each header is name length (1 byte), name, value type (1 byte), value.

// Limits of one message: the prelude and the two checksums are 16 bytes;
// AWS caps a message at 16 MiB and its headers at 128 KiB.
const (
	preludeLen    = 12
	minMessageLen = 16
	maxMessageLen = 16 << 20
	maxHeadersLen = 128 << 10
)

// Errors of a broken frame: the stream cannot be trusted after them.
var (
	ErrPreludeChecksum = errors.New("eventstream: prelude checksum mismatch")
	ErrMessageChecksum = errors.New("eventstream: message checksum mismatch")
	ErrFrame           = errors.New("eventstream: malformed frame")
)

// Message is one decoded event-stream message: its string headers
// (":event-type", ":message-type", ":exception-type", ":content-type") and payload.
type Message struct {
	Headers map[string]string
	Payload []byte
}

// Decoder reads messages one at a time from a stream, verifying both
// checksums of each before it is returned.
type Decoder struct {
	r   *bufio.Reader
	buf []byte
}

// NewDecoder reads from r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: bufio.NewReader(r)} }

// Next returns the next message: io.EOF at a clean end between messages,
// io.ErrUnexpectedEOF inside one, ErrPreludeChecksum / ErrMessageChecksum /
// ErrFrame for a corrupt one.
func (d *Decoder) Next() (Message, error) {
	var prelude [preludeLen]byte
	if _, err := io.ReadFull(d.r, prelude[:]); err != nil {
		if err == io.EOF {
			return Message{}, io.EOF
		}
		return Message{}, io.ErrUnexpectedEOF
	}
	total := binary.BigEndian.Uint32(prelude[0:4])
	hlen := binary.BigEndian.Uint32(prelude[4:8])
	if crc32.ChecksumIEEE(prelude[:8]) != binary.BigEndian.Uint32(prelude[8:12]) {
		return Message{}, ErrPreludeChecksum
	}
	if total < minMessageLen || total > maxMessageLen || hlen > maxHeadersLen || hlen > total-minMessageLen {
		return Message{}, fmt.Errorf("%w: length %d, headers %d", ErrFrame, total, hlen)
	}
	rest := int(total) - preludeLen
	if cap(d.buf) < rest {
		d.buf = make([]byte, rest)
	}
	b := d.buf[:rest]
	if _, err := io.ReadFull(d.r, b); err != nil {
		return Message{}, io.ErrUnexpectedEOF
	}
	crc := crc32.Update(crc32.ChecksumIEEE(prelude[:]), crc32.IEEETable, b[:rest-4])
	if crc != binary.BigEndian.Uint32(b[rest-4:]) {
		return Message{}, ErrMessageChecksum
	}
	headers, err := parseHeaders(b[:hlen])
	if err != nil {
		return Message{}, err
	}
	payload := append([]byte(nil), b[hlen:rest-4]...)
	return Message{Headers: headers, Payload: payload}, nil
}

// parseHeaders keeps the string-valued headers and skips the others by size.
func parseHeaders(b []byte) (map[string]string, error) {
	h := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if n == 0 || len(b) < 1+n+1 {
			return nil, fmt.Errorf("%w: header name", ErrFrame)
		}
		name := string(b[1 : 1+n])
		typ := b[1+n]
		b = b[2+n:]
		var size int
		switch typ {
		case 0, 1: // bool true, false: no value
		case 2:
			size = 1
		case 3:
			size = 2
		case 4:
			size = 4
		case 5, 8:
			size = 8
		case 9:
			size = 16
		case 6, 7: // bytes, string: uint16 length
			if len(b) < 2 {
				return nil, fmt.Errorf("%w: header %s", ErrFrame, name)
			}
			l := int(binary.BigEndian.Uint16(b))
			if len(b) < 2+l {
				return nil, fmt.Errorf("%w: header %s", ErrFrame, name)
			}
			if typ == 7 {
				h[name] = string(b[2 : 2+l])
			}
			b = b[2+l:]
			continue
		default:
			return nil, fmt.Errorf("%w: header %s of type %d", ErrFrame, name, typ)
		}
		if len(b) < size {
			return nil, fmt.Errorf("%w: header %s", ErrFrame, name)
		}
		b = b[size:]
	}
	return h, nil
}

// Encode frames a message with string headers (the fake upstream and tests
// use it; the gateway only decodes).
func Encode(headers [][2]string, payload []byte) []byte {
	var hb []byte
	for _, kv := range headers {
		hb = append(hb, byte(len(kv[0])))
		hb = append(hb, kv[0]...)
		hb = append(hb, 7)
		hb = binary.BigEndian.AppendUint16(hb, uint16(len(kv[1])))
		hb = append(hb, kv[1]...)
	}
	total := preludeLen + len(hb) + len(payload) + 4
	out := make([]byte, 0, total)
	out = binary.BigEndian.AppendUint32(out, uint32(total))
	out = binary.BigEndian.AppendUint32(out, uint32(len(hb)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[:8]))
	out = append(out, hb...)
	out = append(out, payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}
