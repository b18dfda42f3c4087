package translate

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
)

// The JSON helpers every wire's translator shares.

// MarshalJSON encodes v without HTML escaping (the bodies are not HTML).
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// FieldPath and IndexPath build a JSON path for error messages.
func FieldPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func IndexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// CompactJSON returns raw JSON compacted, so it can be re-embedded; nil when
// it is not valid JSON.
func CompactJSON(raw string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return nil
	}
	return buf.Bytes()
}

// RawArgumentsKey carries tool-call arguments that are not a JSON object
// inside a wire's arguments object, so they survive a round trip.
const RawArgumentsKey = "_arguments"

// ArgumentsObject turns a Chat tool call's arguments string into the JSON
// object the Anthropic and Gemini wires carry (arguments that are not an
// object ride under RawArgumentsKey).
func ArgumentsObject(args string) json.RawMessage {
	t := strings.TrimSpace(args)
	if t == "" {
		return json.RawMessage("{}")
	}
	if jsonv.Valid([]byte(t)) && gjson.Parse(t).IsObject() {
		if c := CompactJSON(t); c != nil {
			return c
		}
	}
	b, _ := MarshalJSON(map[string]string{RawArgumentsKey: args})
	return b
}

// ObjectArguments turns a wire's arguments object back into a Chat arguments
// string (ArgumentsObject's inverse).
func ObjectArguments(in gjson.Result) string {
	if !in.Exists() || in.Type == gjson.Null {
		return "{}"
	}
	if in.IsObject() {
		if raw := in.Get(RawArgumentsKey); raw.Type == gjson.String {
			n := 0
			in.ForEach(func(_, _ gjson.Result) bool { n++; return n < 2 })
			if n == 1 {
				return raw.Str
			}
		}
	}
	if in.Type == gjson.String {
		return in.Str
	}
	if c := CompactJSON(in.Raw); c != nil {
		return string(c)
	}
	return "{}"
}

// NewID returns prefix followed by 24 random hex digits, for ids an input lacks.
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Truncate shortens s to at most n bytes (on a rune boundary) for messages.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Each calls fn for every element of arr with its position, and nothing
// when arr is not an array (gjson's ForEach would call fn once for a scalar).
func Each(arr gjson.Result, fn func(i int, v gjson.Result) bool) {
	if !arr.IsArray() {
		return
	}
	i := 0
	arr.ForEach(func(_, v gjson.Result) bool {
		ok := fn(i, v)
		i++
		return ok
	})
}
