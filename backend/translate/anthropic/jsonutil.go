package anthropic

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
)

// parseObject validates body as one JSON object in UTF-8 (JSON text must be
// UTF-8, and ids with invalid bytes could not be copied one-to-one).
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

// optString reads an optional string field: absent or null is "", another type is an error.
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

// optInt reads an optional integer field; ok is false when absent or null.
func optInt(r gjson.Result, path string) (v int64, ok bool, err error) {
	switch r.Type {
	case gjson.Null:
		return 0, false, nil
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

// appendString appends s as a JSON string literal.
func appendString(dst []byte, s string) []byte { return translate.AppendJSONString(dst, s) }

// appendInt appends n in decimal.
func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// The helpers every translator shares (backend/translate), under this
// package's names.

// marshal encodes v without HTML escaping.
func marshal(v any) ([]byte, error) {
	b, err := translate.MarshalJSON(v)
	if err != nil {
		return nil, inputErr("", "cannot encode the translation: %v", err)
	}
	return b, nil
}

func field(parent, key string) string                            { return translate.FieldPath(parent, key) }
func index(parent string, i int) string                          { return translate.IndexPath(parent, i) }
func compactRaw(raw string) json.RawMessage                      { return translate.CompactJSON(raw) }
func argumentsToInput(args string) json.RawMessage               { return translate.ArgumentsObject(args) }
func inputToArguments(in gjson.Result) string                    { return translate.ObjectArguments(in) }
func newID(prefix string) string                                 { return translate.NewID(prefix) }
func truncate(s string, n int) string                            { return translate.Truncate(s, n) }
func each(arr gjson.Result, fn func(i int, v gjson.Result) bool) { translate.Each(arr, fn) }
