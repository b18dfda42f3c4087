package gemini

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// geminiSchemaKeys are the keywords of Gemini's Schema object (an OpenAPI 3.0
// subset); the others are dropped when a JSON Schema goes to Gemini, which
// rejects unknown ones ($schema, additionalProperties, $ref, $defs, oneOf…).
var geminiSchemaKeys = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "maxItems": true, "minItems": true, "properties": true, "required": true,
	"minProperties": true, "maxProperties": true, "minLength": true, "maxLength": true,
	"pattern": true, "example": true, "anyOf": true, "propertyOrdering": true,
	"default": true, "items": true, "minimum": true, "maximum": true,
}

// geminiFormats are the formats Gemini accepts, by type.
var geminiFormats = map[string]map[string]bool{
	"string":  {"enum": true, "date-time": true},
	"integer": {"int32": true, "int64": true},
	"number":  {"float": true, "double": true},
}

// decodeSchema decodes a schema already validated by jsonv (bounded depth).
func decodeSchema(raw string) (map[string]any, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func encodeSchema(m map[string]any) json.RawMessage {
	b, err := marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// schemaToGemini converts a JSON Schema into Gemini's Schema subset: type
// arrays ["T","null"] become type T with nullable, const becomes a one-value
// enum, oneOf becomes anyOf, enums that are not all strings, formats Gemini
// does not know, required names with no property and every keyword outside
// the subset are dropped, and an empty properties object is left out (Gemini
// rejects it). nil means the schema says nothing Gemini can use (an object
// with no properties): the caller leaves the parameters out.
func schemaToGemini(schema gjson.Result) json.RawMessage {
	if !schema.IsObject() {
		return nil
	}
	m, ok := decodeSchema(schema.Raw)
	if !ok {
		return nil
	}
	out := cleanSchema(m)
	if len(out) == 0 || len(out) == 1 && out["type"] == "object" {
		return nil
	}
	return encodeSchema(out)
}

func cleanSchema(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	nullable := false
	// type: a string, or an array with "null" in it.
	switch t := in["type"].(type) {
	case string:
		out["type"] = strings.ToLower(t)
	case []any:
		for _, v := range t {
			s, _ := v.(string)
			if strings.EqualFold(s, "null") {
				nullable = true
			} else if s != "" && out["type"] == nil {
				out["type"] = strings.ToLower(s)
			}
		}
	}
	if c, ok := in["const"]; ok {
		if s, ok := c.(string); ok {
			out["enum"] = []any{s}
			if out["type"] == nil {
				out["type"] = "string"
			}
		}
	}
	if alts, ok := in["anyOf"].([]any); ok {
		in["anyOf"] = alts
	} else if alts, ok := in["oneOf"].([]any); ok {
		in["anyOf"] = alts
	}
	for k, v := range in {
		if !geminiSchemaKeys[k] || k == "type" {
			continue
		}
		switch k {
		case "properties":
			props, ok := v.(map[string]any)
			if !ok || len(props) == 0 {
				continue
			}
			cp := make(map[string]any, len(props))
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok {
					cp[name] = cleanSchema(pm)
				}
			}
			if len(cp) > 0 {
				out["properties"] = cp
			}
		case "items":
			if im, ok := v.(map[string]any); ok {
				out["items"] = cleanSchema(im)
			}
		case "anyOf":
			alts, _ := v.([]any)
			var keep []any
			for _, a := range alts {
				am, ok := a.(map[string]any)
				if !ok {
					continue
				}
				if t, _ := am["type"].(string); strings.EqualFold(t, "null") && len(am) == 1 {
					nullable = true
					continue
				}
				keep = append(keep, cleanSchema(am))
			}
			switch {
			case len(keep) == 1:
				for kk, vv := range keep[0].(map[string]any) {
					if _, set := out[kk]; !set {
						out[kk] = vv
					}
				}
			case len(keep) > 1:
				out["anyOf"] = keep
			}
		case "enum":
			vals, ok := v.([]any)
			if !ok {
				continue
			}
			all := len(vals) > 0
			for _, e := range vals {
				if _, ok := e.(string); !ok {
					all = false
				}
			}
			if all {
				out["enum"] = vals
			}
		case "required":
			out["required"] = v // filtered below, once properties are known
		case "nullable":
			if b, ok := v.(bool); ok && b {
				nullable = true
			}
		default:
			out[k] = v
		}
	}
	if f, ok := out["format"].(string); ok {
		t, _ := out["type"].(string)
		if !geminiFormats[t][f] {
			delete(out, "format")
		}
	}
	if req, ok := out["required"].([]any); ok {
		props, _ := out["properties"].(map[string]any)
		var keep []any
		for _, r := range req {
			if s, ok := r.(string); ok && props[s] != nil {
				keep = append(keep, s)
			}
		}
		if len(keep) > 0 {
			out["required"] = keep
		} else {
			delete(out, "required")
		}
	}
	if _, ok := out["enum"]; ok && out["type"] == "string" {
		if _, has := out["format"]; !has {
			out["format"] = "enum"
		}
	}
	if nullable {
		out["nullable"] = true
	}
	return out
}

// schemaFromGemini converts a Gemini Schema (OpenAPI subset, types often
// upper case) into a JSON Schema for a Chat tool: types in lower case,
// nullable as a ["T","null"] type, propertyOrdering dropped.
func schemaFromGemini(schema gjson.Result) json.RawMessage {
	m, ok := decodeSchema(schema.Raw)
	if !ok {
		return nil
	}
	return encodeSchema(jsonSchemaOf(m))
}

func jsonSchemaOf(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		switch k {
		case "type":
			if s, ok := v.(string); ok {
				out["type"] = strings.ToLower(s)
				if s == "TYPE_UNSPECIFIED" {
					delete(out, "type")
				}
			} else {
				out["type"] = v
			}
		case "nullable", "propertyOrdering":
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				continue
			}
			cp := make(map[string]any, len(props))
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok {
					cp[name] = jsonSchemaOf(pm)
				} else {
					cp[name] = p
				}
			}
			out["properties"] = cp
		case "items":
			if im, ok := v.(map[string]any); ok {
				out["items"] = jsonSchemaOf(im)
			} else {
				out["items"] = v
			}
		case "anyOf":
			alts, _ := v.([]any)
			cp := make([]any, 0, len(alts))
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok {
					cp = append(cp, jsonSchemaOf(am))
				}
			}
			out["anyOf"] = cp
		case "format":
			if s, _ := v.(string); s == "enum" {
				continue // OpenAPI's marker for a string enum; JSON Schema has enum itself
			}
			out[k] = v
		default:
			out[k] = v
		}
	}
	if b, _ := in["nullable"].(bool); b {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	return out
}
