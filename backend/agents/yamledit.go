package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// A line-based view of simple block-style YAML: a top-level mapping whose
// values are scalars or indented blocks (including block sequences written
// at column 0). Anything else (flow collections spanning lines, multiple
// documents, tabs in indentation, anchors on edited keys) is refused so an
// edit can never corrupt a file.

// yline is one physical line.
type yline struct {
	start, end int    // byte range, end past the line ending
	indent     int    // leading spaces
	text       string // content after indentation, without the line ending
	blank      bool   // empty or comment-only
}

func splitYAMLLines(src []byte) ([]yline, error) {
	var out []yline
	for pos, n := 0, 1; pos < len(src); n++ {
		end := pos
		for end < len(src) && src[end] != '\n' {
			end++
		}
		next := end
		if next < len(src) {
			next++
		}
		raw := strings.TrimSuffix(string(src[pos:end]), "\r")
		content := strings.TrimLeft(raw, " ")
		l := yline{start: pos, end: next, indent: len(raw) - len(content), text: content}
		trimmed := strings.TrimSpace(content)
		l.blank = trimmed == "" || strings.HasPrefix(trimmed, "#")
		if !l.blank && strings.HasPrefix(content, "\t") {
			return nil, fmt.Errorf("YAML line %d: tab used for indentation", n)
		}
		out = append(out, l)
		pos = next
	}
	return out, nil
}

// yentry is one top-level key; its value spans lines first..last.
type yentry struct {
	key         string
	rest        string // text after "key:" on the key line
	first, last int
}

var yamlPlainKey = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|$)`)

// yamlKey splits "key: rest" into key and rest; ok is false for other
// lines.
func yamlKey(text string) (key, rest string, ok bool) {
	if m := yamlPlainKey.FindStringSubmatch(text); m != nil {
		return m[1], strings.TrimSpace(text[len(m[0]):]), true
	}
	if text != "" && (text[0] == '"' || text[0] == '\'') {
		k, n, ok := yamlQuoted(text)
		if !ok {
			return "", "", false
		}
		after := strings.TrimLeft(text[n:], " \t")
		if after == ":" || strings.HasPrefix(after, ": ") || strings.HasPrefix(after, ":\t") {
			return k, strings.TrimSpace(after[1:]), true
		}
	}
	return "", "", false
}

// isSeqItem reports whether text starts a block sequence item.
func isSeqItem(text string) bool {
	return text == "-" || strings.HasPrefix(text, "- ") || strings.HasPrefix(text, "-\t")
}

// yamlTopLevel parses the top-level mapping of a simple YAML document.
func yamlTopLevel(lines []yline) ([]yentry, error) {
	var out []yentry
	seenContent := false
	for i, l := range lines {
		if l.blank {
			continue
		}
		if l.indent > 0 {
			if len(out) == 0 {
				return nil, fmt.Errorf("YAML line %d: indented text before the first key", i+1)
			}
			out[len(out)-1].last = i
			continue
		}
		first := !seenContent
		seenContent = true
		switch {
		case first && strings.TrimSpace(l.text) == "---":
			continue
		case isSeqItem(l.text):
			if len(out) == 0 || yamlScalarKind(out[len(out)-1].rest) != yamlEmpty {
				return nil, fmt.Errorf("YAML line %d: unsupported top-level structure", i+1)
			}
			out[len(out)-1].last = i
			continue
		}
		key, rest, ok := yamlKey(l.text)
		if !ok {
			return nil, fmt.Errorf("YAML line %d: unsupported YAML (only block-style mappings are edited)", i+1)
		}
		out = append(out, yentry{key: key, rest: rest, first: i, last: i})
	}
	return out, nil
}

type yamlValueKind int

const (
	yamlEmpty   yamlValueKind = iota // nothing (null or a block below)
	yamlScalar                       // plain or quoted scalar
	yamlComplex                      // flow collection, anchor, alias, tag, block scalar
)

// yamlScalarKind classifies the text after "key:".
func yamlScalarKind(rest string) yamlValueKind {
	rest = strings.TrimSpace(rest)
	switch {
	case rest == "" || strings.HasPrefix(rest, "#"):
		return yamlEmpty
	case strings.ContainsRune("[{&*!|>%@`", rune(rest[0])):
		return yamlComplex
	}
	return yamlScalar
}

// yamlScalarValue decodes a scalar value (plain, single- or double-quoted)
// with any trailing comment removed.
func yamlScalarValue(rest string) string {
	rest = strings.TrimSpace(rest)
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		if v, _, ok := yamlQuoted(rest); ok {
			return v
		}
		return rest
	}
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.Index(rest, "\t#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

// yamlQuoted decodes the quoted scalar at the start of s and returns it and
// the number of bytes consumed.
func yamlQuoted(s string) (string, int, bool) {
	if s == "" {
		return "", 0, false
	}
	if s[0] == '\'' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				return b.String(), i + 1, true
			}
			b.WriteByte(s[i])
		}
		return "", 0, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			var v string
			if json.Unmarshal([]byte(s[:i+1]), &v) != nil {
				v = s[1:i] // YAML-only escapes: compare undecoded
			}
			return v, i + 1, true
		}
	}
	return "", 0, false
}

var yamlSafePlain = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./:@+=~-]*$`)

// yamlScalarText renders s as a YAML scalar: plain when unambiguous,
// otherwise double-quoted (JSON string syntax is valid YAML).
func yamlScalarText(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return string(jsonString(s))
	}
	if yamlSafePlain.MatchString(s) && !strings.HasSuffix(s, ":") {
		return s
	}
	return string(jsonString(s))
}

// lineRange is the byte range of lines first..last.
func lineRange(lines []yline, first, last int) (int, int) {
	return lines[first].start, lines[last].end
}

// insertAfterLine returns an edit inserting text after line i (adding a line
// ending if that line has none).
func insertAfterLine(src []byte, lines []yline, i int, text, nl string) tomlEdit {
	pos := lines[i].end
	if pos == len(src) && !endsWithNewline(src) {
		text = nl + text
	}
	return tomlEdit{start: pos, end: pos, text: text}
}

// appendText appends text to src on its own line.
func appendText(src []byte, text, nl string) []byte {
	out := append([]byte(nil), src...)
	if !endsWithNewline(out) {
		out = append(out, nl...)
	}
	return append(out, text...)
}

// setTopLevelKeys sets each key to its (already rendered) value in a simple
// YAML document: the first occurrence is replaced in place, duplicates are
// removed and missing keys are appended.
func setTopLevelKeys(src []byte, kvs [][2]string) ([]byte, error) {
	lines, err := splitYAMLLines(src)
	if err != nil {
		return nil, err
	}
	entries, err := yamlTopLevel(lines)
	if err != nil {
		return nil, err
	}
	nl := newlineOf(src)
	var edits []tomlEdit
	var missing strings.Builder
	for _, kv := range kvs {
		found := false
		for _, e := range entries {
			if e.key != kv[0] {
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(e.rest), "&") {
				return nil, errors.New("YAML key " + kv[0] + " carries an anchor")
			}
			start, end := lineRange(lines, e.first, e.last)
			text := ""
			if !found {
				text = kv[0] + ": " + kv[1] + nl
				found = true
			}
			edits = append(edits, tomlEdit{start: start, end: end, text: text})
		}
		if !found {
			missing.WriteString(kv[0] + ": " + kv[1] + nl)
		}
	}
	out := applyEdits(src, edits)
	if missing.Len() > 0 {
		out = appendText(out, missing.String(), nl)
	}
	return out, nil
}
