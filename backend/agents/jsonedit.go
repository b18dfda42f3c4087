package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonObject is a JSON object that keeps its members' order and their values
// byte-for-byte (numbers, escapes), so a merge only changes what it sets.
type jsonObject struct {
	members []jsonMember
}

type jsonMember struct {
	key string
	val json.RawMessage
}

// parseJSONObject parses data, which must be exactly one JSON object.
// Whitespace-only input yields an empty object.
func parseJSONObject(data []byte) (*jsonObject, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &jsonObject{}, nil
	}
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("top level is not a JSON object")
	}
	obj := &jsonObject{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("malformed object key")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		obj.members = append(obj.members, jsonMember{key: key, val: raw})
	}
	if _, err := dec.Token(); err != nil { // closing '}'
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return obj, nil
}

// get returns the value of key (the last one, as JSON parsers do with
// duplicates).
func (o *jsonObject) get(key string) (json.RawMessage, bool) {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return o.members[i].val, true
		}
	}
	return nil, false
}

// set replaces the first member named key (dropping duplicates) or appends
// it.
func (o *jsonObject) set(key string, val json.RawMessage) {
	out := o.members[:0]
	done := false
	for _, m := range o.members {
		if m.key == key {
			if done {
				continue
			}
			m.val, done = val, true
		}
		out = append(out, m)
	}
	if !done {
		out = append(out, jsonMember{key: key, val: val})
	}
	o.members = out
}

// remove drops every member named key.
func (o *jsonObject) remove(key string) {
	out := o.members[:0]
	for _, m := range o.members {
		if m.key != key {
			out = append(out, m)
		}
	}
	o.members = out
}

// setString sets key to the JSON string s.
func (o *jsonObject) setString(key, s string) { o.set(key, jsonString(s)) }

// object returns the member key as an object: a new empty one when it is
// absent or null, an error when it is another type.
func (o *jsonObject) object(key string) (*jsonObject, error) {
	raw, ok := o.get(key)
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return &jsonObject{}, nil
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%q is not a JSON object", key)
	}
	return parseJSONObject(raw)
}

// stringAt returns the JSON string at path (objects down to its last key) in
// data: how each agent's config is checked for the gateway's address.
func stringAt(data []byte, path ...string) (string, bool) {
	o, err := parseJSONObject(data)
	for _, key := range path[:len(path)-1] {
		if err != nil {
			return "", false
		}
		o, err = o.object(key)
	}
	if err != nil {
		return "", false
	}
	return o.str(path[len(path)-1])
}

// str returns the member key when it is a JSON string.
func (o *jsonObject) str(key string) (string, bool) {
	raw, ok := o.get(key)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// compact encodes the object on one line.
func (o *jsonObject) compact() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(m.key))
		b.WriteByte(':')
		if err := json.Compact(&b, m.val); err != nil {
			b.Write(m.val) // values came from a valid document; unreachable
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// pretty encodes the object indented with indent, ending with a newline.
func (o *jsonObject) pretty(indent string) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.compact(), "", indent); err != nil {
		return append(o.compact(), '\n') // unreachable: compact is valid JSON
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // strings always encode
	return bytes.TrimRight(b.Bytes(), "\n")
}

// detectIndent returns the indentation unit of a pretty-printed JSON
// document (the whitespace before the first indented line), or two spaces.
func detectIndent(data []byte) string {
	for i := 0; i < len(data); i++ {
		if data[i] != '\n' {
			continue
		}
		j := i + 1
		for j < len(data) && (data[j] == ' ' || data[j] == '\t') {
			j++
		}
		if j > i+1 && j < len(data) && data[j] != '\n' && data[j] != '\r' {
			return string(data[i+1 : j])
		}
	}
	return "  "
}
