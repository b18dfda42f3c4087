// Package jsonwalk is a lean walker over JSON that jsonv has already
// accepted: looking up a handful of keys in a streaming chunk or a request
// body is dominated by skipping the values around them, and these helpers
// skip without parsing (no number conversion, no unescaping; long strings
// are skipped with IndexByte) and hand out raw value slices. Strings are
// unescaped by gjson, and only when they contain escapes. Members hands out
// object keys as written (an escaped key such as "con\u0074ent" is not
// "content" to a plain comparison; Key reads it as a JSON reader would).
// Every index is bounds-checked, so even input that skipped validation
// cannot make them panic.
package jsonwalk

import (
	"strings"

	"github.com/tidwall/gjson"
)

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the string that opens at s[i] == '"'.
func SkipString(s string, i int) int {
	// Short strings (ids, keys, most deltas) are cheaper to walk byte by byte;
	// long ones go to IndexByte.
	for end := min(i+64, len(s)); ; {
		i++
		if i >= end {
			break
		}
		switch s[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
	for i < len(s) {
		q := strings.IndexByte(s[i:], '"')
		if q < 0 {
			return len(s)
		}
		i += q
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
	return len(s)
}

// SkipValue returns the index just past the value that starts at s[i].
func SkipValue(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	switch s[i] {
	case '"':
		return SkipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = SkipString(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(s)
	}
	for i < len(s) {
		switch s[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return len(s)
}

// The walkers hand each value to their callback as the tail of the input that
// starts with it, so a callback can descend into the value in the same pass and
// report how far it got. A callback returns the length of the value it consumed,
// 0 to let the walker skip the value, or a negative number to stop.

// Members walks the object at the start of obj, calling fn with each key (as
// written, without quotes) and the tail starting at its value. It returns the
// length of the object (or of what was walked, when fn stops or the input ends);
// a non-object calls nothing and returns 0.
func Members(obj string, fn func(key, tail string) int) int {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0
	}
	for i++; ; i++ {
		i = SkipSpace(obj, i)
		if i >= len(obj) {
			return len(obj)
		}
		if obj[i] == '}' {
			return i + 1
		}
		if obj[i] != '"' {
			return i
		}
		end := SkipString(obj, i)
		key := obj[i+1 : max(end-1, i+1)]
		i = SkipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return i
		}
		i = SkipSpace(obj, i+1)
		n := fn(key, obj[i:])
		switch {
		case n < 0:
			return i
		case n == 0:
			i = SkipValue(obj, i)
		default:
			i = min(i+n, len(obj))
		}
		i = SkipSpace(obj, i)
		if i >= len(obj) {
			return len(obj)
		}
		if obj[i] == '}' {
			return i + 1
		}
		if obj[i] != ',' {
			return i
		}
	}
}

// Elements walks the array at the start of arr like members, calling fn with the
// tail starting at each element.
func Elements(arr string, fn func(tail string) int) int {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return 0
	}
	for i++; ; i++ {
		i = SkipSpace(arr, i)
		if i >= len(arr) {
			return len(arr)
		}
		if arr[i] == ']' {
			return i + 1
		}
		n := fn(arr[i:])
		switch {
		case n < 0:
			return i
		case n == 0:
			i = SkipValue(arr, i)
		default:
			i = min(i+n, len(arr))
		}
		i = SkipSpace(arr, i)
		if i >= len(arr) {
			return len(arr)
		}
		if arr[i] == ']' {
			return i + 1
		}
		if arr[i] != ',' {
			return i
		}
	}
}

// Value is the raw JSON value at the start of tail.
func Value(tail string) string { return tail[:SkipValue(tail, 0)] }

// Member returns the raw value of key in the object obj, or "" when absent.
func Member(obj, key string) string {
	var found string
	Members(obj, func(k, tail string) int {
		if k != key {
			return 0
		}
		found = Value(tail)
		return -1
	})
	return found
}

// Path returns the raw value at the dotted object path keys in obj, or "".
func Path(obj string, keys ...string) string {
	for _, k := range keys {
		if obj = Member(obj, k); obj == "" {
			return ""
		}
	}
	return obj
}

// IsString reports whether the raw value v is a JSON string.
func IsString(v string) bool { return len(v) > 0 && v[0] == '"' }

// IsObject reports whether the raw value v is a JSON object.
func IsObject(v string) bool { return len(v) > 0 && v[0] == '{' }

// IsArray reports whether the raw value v is a JSON array.
func IsArray(v string) bool { return len(v) > 0 && v[0] == '[' }

// Present reports whether the raw value v exists and is not null.
func Present(v string) bool { return v != "" && v != "null" }

// Str returns the unescaped text of the raw JSON string v, or "" for a non-string.
// It allocates only when v contains escapes.
func Str(v string) string {
	if !IsString(v) || len(v) < 2 {
		return ""
	}
	if inner := v[1 : len(v)-1]; strings.IndexByte(inner, '\\') < 0 {
		return inner
	}
	return gjson.Parse(v).Str
}

// StrLen is the UTF-8 length of the unescaped raw JSON string v (0 for a non-string).
func StrLen(v string) int { return len(Str(v)) }

// Fields walks the object obj once and sets vals[i] to the raw value of its
// first member named keys[i] (keys read by Key), "" for a key it lacks (a
// raw value is never empty). It returns what Members returns.
func Fields(obj string, keys, vals []string) int {
	return Members(obj, func(key, tail string) int {
		key = Key(key)
		for i, k := range keys {
			if vals[i] == "" && key == k {
				vals[i] = Value(tail)
				return len(vals[i])
			}
		}
		return 0
	})
}

// Key is the object key raw (as Members hands it out, without quotes) as a
// JSON reader reads it: as written when it has no backslash, else unescaped
// (rare, and only from a hostile or odd writer), as gjson and encoding/json
// read it.
func Key(raw string) string {
	if strings.IndexByte(raw, '\\') < 0 {
		return raw
	}
	return Str(`"` + raw + `"`)
}
