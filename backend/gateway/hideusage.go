package gateway

import (
	"bytes"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// appendHidingUsage queues an upstream event for a client that did not ask
// for usage, without it (hiddenUsage). Out of line: the relay's frame sits
// under every open stream.
//
//go:noinline
func (s *streamState) appendHidingUsage(event string, data []byte) {
	if bytes.Contains(data, []byte(`"usage"`)) {
		var drop bool
		if data, drop = hiddenUsage(data); drop {
			return
		}
	}
	s.pending = sse.Append(s.pending, event, data)
}

// hiddenUsage is what the client of a stream that did not ask for usage gets
// of an upstream event: the gateway asked for usage on its behalf (askUsage),
// so the event that carries only usage ("choices": []) is dropped (drop) and
// the "usage" member every other chunk carries is cut out. The cut is made in
// place, in the event's own bytes (already read for the watchdog, the
// continuation text and the usage): a stream pays no allocation per chunk.
//
//go:noinline
func hiddenUsage(data []byte) (out []byte, drop bool) {
	u := gjson.Get(view(data), "usage")
	if !u.Exists() || u.Index <= 0 {
		return data, false
	}
	if u.IsObject() {
		if c := gjson.Get(view(data), "choices"); c.IsArray() && emptyArray(c.Raw) {
			return nil, true
		}
	}
	start, end, ok := memberSpan(data, u.Index, u.Index+len(u.Raw))
	if !ok {
		return data, false
	}
	n := copy(data[start:], data[end:])
	return data[:start+n], false
}

// emptyArray reports a raw JSON array with no element.
func emptyArray(raw string) bool {
	for i := 1; i < len(raw)-1; i++ {
		if !jsonSpace(raw[i]) {
			return false
		}
	}
	return true
}

func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// memberSpan is the span of an object member whose value is data[vs:ve]:
// from the comma before its key (or, for the first member, from its key to
// past the comma after its value), so cutting it leaves valid JSON.
func memberSpan(data []byte, vs, ve int) (start, end int, ok bool) {
	i := vs - 1
	for i >= 0 && jsonSpace(data[i]) {
		i--
	}
	if i < 0 || data[i] != ':' {
		return 0, 0, false
	}
	i--
	for i >= 0 && jsonSpace(data[i]) {
		i--
	}
	if i < 0 || data[i] != '"' {
		return 0, 0, false
	}
	i--
	for i >= 0 && data[i] != '"' {
		i--
	}
	if i < 0 {
		return 0, 0, false
	}
	keyStart := i
	i--
	for i >= 0 && jsonSpace(data[i]) {
		i--
	}
	switch {
	case i >= 0 && data[i] == ',':
		return i, ve, true
	case i >= 0 && data[i] == '{':
		j := ve
		for j < len(data) && jsonSpace(data[j]) {
			j++
		}
		if j < len(data) && data[j] == ',' {
			j++
			for j < len(data) && jsonSpace(data[j]) {
				j++
			}
			return keyStart, j, true
		}
		return keyStart, ve, true // the only member
	}
	return 0, 0, false
}

// hidingUsage is a translated stream's translator for a Chat or Completions
// client that did not ask for usage: the translation from Anthropic, Gemini
// or Responses (Codex) ends with a usage-only chunk, which is dropped, and
// any "usage" member cut out, as for a passthrough (appendHidingUsage). The
// usage is still read by tr (Usage) for the request log and the bill.
func hidingUsage(tr translate.StreamTranslator) translate.StreamTranslator {
	if tr == nil {
		return nil
	}
	return &chain{first: tr, second: usageHider{}}
}

// usageHider relays Chat stream events without the usage the client did not
// ask for; it is the second half of hidingUsage's chain.
type usageHider struct{}

func (usageHider) Event(dst []byte, ev sse.Event) ([]byte, error) {
	if ev.Comment {
		return append(dst, ":\n\n"...), nil
	}
	data := ev.Data
	if bytes.Contains(data, []byte(`"usage"`)) {
		var drop bool
		if data, drop = hiddenUsage(data); drop {
			return dst, nil
		}
	}
	return sse.Append(dst, ev.Event, data), nil
}

func (usageHider) End(dst []byte) []byte  { return dst }
func (usageHider) Complete() bool         { return true }
func (usageHider) Usage() translate.Usage { return translate.Usage{} }
