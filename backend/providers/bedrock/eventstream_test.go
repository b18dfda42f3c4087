package bedrock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func event(typ, payload string) []byte {
	return Encode([][2]string{{":event-type", typ}, {":content-type", "application/json"}, {":message-type", "event"}}, []byte(payload))
}

// TestDecoderReadsFrames: messages decode one by one, across reads of one
// byte at a time, with their string headers and payload; a clean end is io.EOF.
func TestDecoderReadsFrames(t *testing.T) {
	stream := append(event("messageStart", `{"role":"assistant"}`), event("contentBlockDelta", `{"delta":{"text":"Hi"},"contentBlockIndex":0}`)...)
	d := NewDecoder(iotest.OneByteReader(bytes.NewReader(stream)))
	for _, want := range []string{"messageStart", "contentBlockDelta"} {
		m, err := d.Next()
		if err != nil || m.Headers[":event-type"] != want || m.Headers[":message-type"] != "event" {
			t.Fatalf("message %s: %+v %v", want, m, err)
		}
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// TestDecoderRejectsBrokenFrames: a flipped payload byte, a flipped length,
// a truncated frame and an impossible length are errors, never a message.
func TestDecoderRejectsBrokenFrames(t *testing.T) {
	good := event("contentBlockDelta", `{"delta":{"text":"Hello"}}`)
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x01
		return b
	}
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"payload byte", flip(len(good) - 6), ErrMessageChecksum},
		{"message checksum", flip(len(good) - 1), ErrMessageChecksum},
		{"length", flip(3), ErrPreludeChecksum},
		{"prelude checksum", flip(9), ErrPreludeChecksum},
		{"truncated", good[:len(good)-3], io.ErrUnexpectedEOF},
		{"half a prelude", good[:5], io.ErrUnexpectedEOF},
		{"too short", shortFrame(), ErrFrame},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewDecoder(bytes.NewReader(c.in)).Next()
			if !errors.Is(err, c.want) || m.Payload != nil {
				t.Fatalf("got %+v %v, want %v", m, err, c.want)
			}
		})
	}
}

// shortFrame claims a total length of 8 (under the 16-byte minimum) with a
// valid prelude checksum.
func shortFrame() []byte {
	b := binary.BigEndian.AppendUint32(nil, 8)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return append(b, 0, 0, 0, 0)
}

// TestStreamException: an exception message inside ConverseStream becomes
// one OpenAI-shaped error event (its AWS type as the code) and ends the
// stream without [DONE], so the gateway judges it as an in-stream error.
func TestStreamException(t *testing.T) {
	stream := append(event("messageStart", `{"role":"assistant"}`),
		Encode([][2]string{{":message-type", "exception"}, {":exception-type", "throttlingException"}, {":content-type", "application/json"}},
			[]byte(`{"message":"Too many tokens, please wait before trying again."}`))...)
	r := NewSSEReader(io.NopCloser(bytes.NewReader(stream)), "id-1", "m", 1)
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, `"code":"ThrottlingException"`) || !strings.Contains(s, "Too many tokens") || strings.Contains(s, "[DONE]") {
		t.Fatalf("%s", s)
	}
}
