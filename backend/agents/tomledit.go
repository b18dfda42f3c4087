package agents

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// A small TOML statement scanner: enough to find table headers and key/value
// statements (with their exact byte ranges) so edits can replace a few
// statements and keep every other byte of the file. It understands all four
// string forms, multi-line arrays and inline tables and comments, and
// reports an error rather than guessing on anything it cannot follow.

type tomlKind int

const (
	tomlKeyVal     tomlKind = iota // key = value
	tomlTable                      // [table]
	tomlArrayTable                 // [[table]]
)

// tomlStmt is one statement; start is the offset of its first line and end
// is just past its last line (including the newline, if any).
type tomlStmt struct {
	kind       tomlKind
	key        []string // header name, or the key of a key/value (relative to its table)
	start, end int
	value      string // raw value text (key/values only)
}

type tomlScanner struct {
	src  []byte
	i    int
	line int
}

func (s *tomlScanner) errf(format string, args ...any) error {
	return fmt.Errorf("TOML line %d: "+format, append([]any{s.line}, args...)...)
}

func (s *tomlScanner) skipWS() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// atEOL reports end of input or of the line.
func (s *tomlScanner) atEOL() bool {
	return s.i >= len(s.src) || s.src[s.i] == '\n' ||
		(s.src[s.i] == '\r' && s.i+1 < len(s.src) && s.src[s.i+1] == '\n')
}

func (s *tomlScanner) eatEOL() {
	switch {
	case s.i >= len(s.src):
	case s.src[s.i] == '\n':
		s.i++
		s.line++
	case s.src[s.i] == '\r':
		s.i += 2
		s.line++
	}
}

func (s *tomlScanner) skipComment() {
	for !s.atEOL() {
		if s.src[s.i] == '\r' { // lone CR inside a comment: invalid, but harmless to skip
			s.i++
			continue
		}
		s.i++
	}
}

// trailing consumes optional whitespace and comment, then the line end.
func (s *tomlScanner) trailing() error {
	s.skipWS()
	if s.i < len(s.src) && s.src[s.i] == '#' {
		s.skipComment()
	}
	if !s.atEOL() {
		return s.errf("unexpected text after statement")
	}
	s.eatEOL()
	return nil
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// parseKey parses a (possibly dotted, possibly quoted) key.
func (s *tomlScanner) parseKey() ([]string, error) {
	var parts []string
	for {
		s.skipWS()
		if s.i >= len(s.src) {
			return nil, s.errf("unexpected end of file in key")
		}
		switch c := s.src[s.i]; {
		case c == '"' || c == '\'':
			start := s.i
			if err := s.parseString(); err != nil {
				return nil, err
			}
			k, ok := tomlUnquote(string(s.src[start:s.i]))
			if !ok {
				return nil, s.errf("invalid quoted key")
			}
			parts = append(parts, k)
		case isBareKeyByte(c):
			start := s.i
			for s.i < len(s.src) && isBareKeyByte(s.src[s.i]) {
				s.i++
			}
			parts = append(parts, string(s.src[start:s.i]))
		default:
			return nil, s.errf("invalid key")
		}
		s.skipWS()
		if s.i < len(s.src) && s.src[s.i] == '.' {
			s.i++
			continue
		}
		return parts, nil
	}
}

// parseString consumes one string of any of the four forms.
func (s *tomlScanner) parseString() error {
	src := s.src
	switch {
	case bytes.HasPrefix(src[s.i:], []byte(`"""`)), bytes.HasPrefix(src[s.i:], []byte(`'''`)):
		q := src[s.i]
		escapes := q == '"'
		s.i += 3
		for {
			if s.i >= len(src) {
				return s.errf("unterminated multi-line string")
			}
			c := src[s.i]
			switch {
			case escapes && c == '\\':
				s.i++
				if s.i < len(src) && src[s.i] == '\n' {
					s.line++
				}
				s.i++
			case c == q && s.i+2 < len(src) && src[s.i+1] == q && src[s.i+2] == q:
				s.i += 3
				for k := 0; k < 2 && s.i < len(src) && src[s.i] == q; k++ { // up to two quotes may end the content
					s.i++
				}
				return nil
			default:
				if c == '\n' {
					s.line++
				}
				s.i++
			}
		}
	case src[s.i] == '"':
		s.i++
		for {
			if s.atEOL() {
				return s.errf("unterminated string")
			}
			switch src[s.i] {
			case '\\':
				s.i++
				if s.atEOL() {
					return s.errf("unterminated string")
				}
				s.i++
			case '"':
				s.i++
				return nil
			default:
				s.i++
			}
		}
	case src[s.i] == '\'':
		s.i++
		for {
			if s.atEOL() {
				return s.errf("unterminated string")
			}
			if src[s.i] == '\'' {
				s.i++
				return nil
			}
			s.i++
		}
	}
	return s.errf("expected a string")
}

// parseValue consumes a value: string, array, inline table or scalar.
func (s *tomlScanner) parseValue() error {
	if s.atEOL() {
		return s.errf("missing value")
	}
	switch c := s.src[s.i]; c {
	case '"', '\'':
		return s.parseString()
	case '[', '{':
		depth := 0
		for {
			if s.i >= len(s.src) {
				return s.errf("unterminated array or inline table")
			}
			switch c := s.src[s.i]; c {
			case '"', '\'':
				if err := s.parseString(); err != nil {
					return err
				}
			case '#':
				s.skipComment()
			case '\n':
				s.i++
				s.line++
			case '[', '{':
				depth++
				s.i++
			case ']', '}':
				depth--
				s.i++
				if depth == 0 {
					return nil
				}
			default:
				s.i++
			}
		}
	default:
		// Numbers, booleans, dates (which may contain one space): up to a
		// comment or the line end.
		start := s.i
		for !s.atEOL() && s.src[s.i] != '#' {
			s.i++
		}
		for s.i > start && (s.src[s.i-1] == ' ' || s.src[s.i-1] == '\t') {
			s.i--
		}
		if s.i == start {
			return s.errf("missing value")
		}
		return nil
	}
}

// scanTOML splits src into statements; blank and comment lines are not
// statements.
func scanTOML(src []byte) ([]tomlStmt, error) {
	s := &tomlScanner{src: src, line: 1}
	var out []tomlStmt
	for s.i < len(src) {
		start := s.i
		s.skipWS()
		if s.atEOL() {
			s.eatEOL()
			continue
		}
		switch src[s.i] {
		case '#':
			if err := s.trailing(); err != nil {
				return nil, err
			}
		case '[':
			kind := tomlTable
			s.i++
			if s.i < len(src) && src[s.i] == '[' {
				kind = tomlArrayTable
				s.i++
			}
			key, err := s.parseKey()
			if err != nil {
				return nil, err
			}
			closer := "]"
			if kind == tomlArrayTable {
				closer = "]]"
			}
			if !bytes.HasPrefix(src[s.i:], []byte(closer)) {
				return nil, s.errf("malformed table header")
			}
			s.i += len(closer)
			if err := s.trailing(); err != nil {
				return nil, err
			}
			out = append(out, tomlStmt{kind: kind, key: key, start: start, end: s.i})
		default:
			key, err := s.parseKey()
			if err != nil {
				return nil, err
			}
			if s.i >= len(src) || src[s.i] != '=' {
				return nil, s.errf("expected '=' after key")
			}
			s.i++
			s.skipWS()
			vs := s.i
			if err := s.parseValue(); err != nil {
				return nil, err
			}
			val := string(src[vs:s.i])
			if err := s.trailing(); err != nil {
				return nil, err
			}
			out = append(out, tomlStmt{kind: tomlKeyVal, key: key, start: start, end: s.i, value: val})
		}
	}
	return out, nil
}

// tomlUnquote decodes a single-line basic or literal string.
func tomlUnquote(raw string) (string, bool) {
	switch {
	case len(raw) >= 2 && raw[0] == '\'' && raw[len(raw)-1] == '\'' && !strings.HasPrefix(raw, "'''"):
		return raw[1 : len(raw)-1], true
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !strings.HasPrefix(raw, `"""`):
		s, err := strconv.Unquote(raw)
		return s, err == nil
	}
	return "", false
}

// tomlQuote encodes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// hasPrefixKey reports whether key starts with prefix.
func hasPrefixKey(key []string, prefix ...string) bool {
	if len(key) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if key[i] != p {
			return false
		}
	}
	return true
}

// keyIs reports whether key equals want.
func keyIs(key []string, want ...string) bool {
	return len(key) == len(want) && hasPrefixKey(key, want...)
}

// tomlEdit replaces src[start:end] with text.
type tomlEdit struct {
	start, end int
	text       string
}

// applyEdits applies non-overlapping edits.
func applyEdits(src []byte, edits []tomlEdit) []byte {
	// Stable insertion sort by (start, end): few edits.
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && (edits[j].start < edits[j-1].start ||
			(edits[j].start == edits[j-1].start && edits[j].end < edits[j-1].end)); j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	var out []byte
	pos := 0
	for _, e := range edits {
		out = append(out, src[pos:e.start]...)
		out = append(out, e.text...)
		pos = e.end
	}
	return append(out, src[pos:]...)
}

// newlineOf returns the line ending a file uses ("\r\n" or "\n").
func newlineOf(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// endsWithNewline reports whether src is empty or ends with a line end.
func endsWithNewline(src []byte) bool {
	return len(src) == 0 || src[len(src)-1] == '\n'
}
