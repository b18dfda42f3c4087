package fakeupstream

import (
	"bytes"
	"strconv"

	"github.com/tidwall/sjson"
)

// withoutUsage is an OpenAI answer with no usage: the JSON body without its
// "usage" member, the stream without the frames that carry a usage object
// (the usage chunk; the "usage":null of the other chunks stays).
func withoutUsage(a *answer) *answer {
	b := *a
	if body, err := sjson.DeleteBytes(a.body, "usage"); err == nil {
		b.body, b.bodyLen = body, []string{strconv.Itoa(len(body))}
	}
	b.head = dropUsageFrames(a.head)
	b.chunks = make([][]byte, len(a.chunks))
	for i, c := range a.chunks {
		b.chunks[i] = dropUsageFrames(c)
	}
	tail := dropUsageFrames(a.tail)
	b.done = a.done
	if len(tail) < a.done {
		b.done = 0
	}
	b.tail = tail
	return &b
}

// dropUsageFrames is SSE frames without those whose data carries a usage
// object.
func dropUsageFrames(frames []byte) []byte {
	if !bytes.Contains(frames, []byte(`"usage":{`)) {
		return frames
	}
	var out []byte
	for rest := frames; len(rest) > 0; {
		frame := rest
		if i := bytes.Index(rest, []byte("\n\n")); i >= 0 {
			frame, rest = rest[:i+2], rest[i+2:]
		} else {
			rest = nil
		}
		if !bytes.Contains(frame, []byte(`"usage":{`)) {
			out = append(out, frame...)
		}
	}
	return out
}
