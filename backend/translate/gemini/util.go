package gemini

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
	"omniroute/backend/translate"
)

// parseObject validates body with jsonv (bounded depth, no recursion) and
// UTF-8, then parses it; anything but one JSON object is an *InputError.
func parseObject(body []byte, what string) (gjson.Result, error) {
	if !jsonv.Valid(body) {
		return gjson.Result{}, inputErr("", "%s is not valid JSON", what)
	}
	if !utf8.Valid(body) {
		return gjson.Result{}, inputErr("", "%s is not valid UTF-8", what)
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return gjson.Result{}, inputErr("", "%s must be a JSON object", what)
	}
	return root, nil
}

// pick returns the first of names present in r. Google's JSON parser accepts
// both the proto field name (snake_case, as the REST docs' curl examples use)
// and its lowerCamelCase JSON name, so every Gemini field is read under both.
func pick(r gjson.Result, names ...string) gjson.Result {
	for _, n := range names {
		if v := r.Get(n); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// marshal encodes v without HTML escaping (the bodies are not HTML).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, inputErr("", "cannot encode the translation: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// field formats a JSON path for error messages.
func field(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// optString reads an optional string: absent or null is "", another type an error.
func optString(r gjson.Result, path string) (string, error) {
	switch r.Type {
	case gjson.Null:
		return "", nil
	case gjson.String:
		return r.Str, nil
	}
	return "", inputErr(path, "must be a string")
}

// optNumber returns the raw JSON of an optional number, nil when absent or null.
func optNumber(r gjson.Result, path string) (json.RawMessage, error) {
	switch r.Type {
	case gjson.Null:
		return nil, nil
	case gjson.Number:
		return json.RawMessage(r.Raw), nil
	}
	return nil, inputErr(path, "must be a number")
}

// optInt reads an optional integer; ok is false when absent or null. Google's
// JSON writes int64 fields as strings, so a decimal string is accepted too.
func optInt(r gjson.Result, path string) (v int64, ok bool, err error) {
	switch r.Type {
	case gjson.Null:
		return 0, false, nil
	case gjson.String:
		n, perr := strconv.ParseInt(r.Str, 10, 64)
		if perr != nil || n > 1<<53 || n < -(1<<53) {
			return 0, false, inputErr(path, "must be an integer")
		}
		return n, true, nil
	case gjson.Number:
		f := r.Float()
		if f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
			return 0, false, inputErr(path, "must be an integer")
		}
		return int64(f), true, nil
	}
	return 0, false, inputErr(path, "must be an integer")
}

// optBool reads an optional boolean; ok is false when absent or null.
func optBool(r gjson.Result, path string) (v, ok bool, err error) {
	switch r.Type {
	case gjson.Null:
		return false, false, nil
	case gjson.True:
		return true, true, nil
	case gjson.False:
		return false, true, nil
	}
	return false, false, inputErr(path, "must be a boolean")
}

// compactRaw returns raw JSON compacted, nil when it is not valid JSON.
func compactRaw(raw string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return nil
	}
	return buf.Bytes()
}

// rawArgsKey carries tool-call arguments that are not a JSON object inside a
// Gemini args object (a protobuf Struct), so they survive a round trip.
const rawArgsKey = "_arguments"

// argumentsToArgs turns a Chat arguments string into a Gemini args object.
func argumentsToArgs(args string) json.RawMessage {
	t := strings.TrimSpace(args)
	if t == "" {
		return json.RawMessage("{}")
	}
	if jsonv.Valid([]byte(t)) && gjson.Parse(t).IsObject() {
		if c := compactRaw(t); c != nil {
			return c
		}
	}
	b, _ := marshal(map[string]string{rawArgsKey: args})
	return b
}

// argsToArguments turns a Gemini args object into a Chat arguments string.
func argsToArguments(in gjson.Result) string {
	if !in.Exists() || in.Type == gjson.Null {
		return "{}"
	}
	if in.IsObject() {
		if raw := in.Get(rawArgsKey); raw.Type == gjson.String {
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
	if c := compactRaw(in.Raw); c != nil {
		return string(c)
	}
	return "{}"
}

// newID returns prefix followed by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// appendString appends s as a JSON string literal.
func appendString(dst []byte, s string) []byte { return translate.AppendJSONString(dst, s) }

// appendInt appends n in decimal.
func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// truncate shortens s to at most n bytes (on a rune boundary) for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// each calls fn for every element of arr with its position; nothing when arr
// is not an array (gjson's ForEach would call fn once for a scalar).
func each(arr gjson.Result, fn func(i int, v gjson.Result) bool) {
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

// parseDataURL splits "data:<media type>[;params];base64,<data>".
func parseDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	params := strings.Split(meta, ";")
	if len(params) < 2 || params[len(params)-1] != "base64" {
		return "", "", false
	}
	mediaType = params[0]
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	return mediaType, data, true
}
