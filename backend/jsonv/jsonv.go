// Package jsonv validates untrusted JSON in one bounded pass before anything
// else reads it.
//
// Every body the gateway did not write itself — a client request, an
// upstream's answer, each SSE event's data — goes through Check before gjson,
// encoding/json or a translator touches it. The validator is iterative (a
// fixed-size bit stack, no recursion), so hostile nesting cannot overflow the
// goroutine stack the way a recursive validator does (gjson.ValidBytes dies
// with a fatal, unrecoverable "stack overflow" on a few million '['); nesting
// deeper than MaxDepth is refused. It checks the full RFC 8259 grammar, that
// strings are valid UTF-8 (so nothing downstream sees, or forwards, invalid
// text), and that exactly one value fills the input. The work is linear in the
// input and allocates nothing per byte: a 1 MB body costs one pass.
//
// CheckRequest adds what a request body needs: an object at the top, and no
// key twice at the top level, in any spelling (escapes, case). A repeated
// "model" is the classic bypass of a per-key model allowlist: the gateway's
// reader sees the first, an upstream's parser the last — or, for "Model", a
// case-insensitive parser (Go's encoding/json) the second.
package jsonv

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays accepted. Real LLM
// payloads (tool schemas included) stay far below it.
const MaxDepth = 128

// Kind says what is wrong with a document.
type Kind int

// Error kinds.
const (
	Syntax    Kind = iota + 1 // not JSON (or not valid UTF-8)
	TooDeep                   // nesting past MaxDepth
	NotObject                 // CheckRequest: the top value is not an object
	Duplicate                 // CheckRequest: a top-level key appears twice
)

// Error is a validation failure at a byte offset.
type Error struct {
	Kind   Kind
	Offset int
	Msg    string
	// Key is the repeated key (Duplicate only), unescaped and lower-cased,
	// truncated to 64 bytes.
	Key string
}

func (e *Error) Error() string {
	if e.Kind == Duplicate {
		return fmt.Sprintf("field %q appears more than once at the top level (names are compared ignoring case)", e.Key)
	}
	return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset)
}

// Valid reports whether b is one well-formed JSON value within MaxDepth.
func Valid(b []byte) bool { return scan(b, false) == nil }

// Check returns nil when b is one well-formed JSON value within MaxDepth, or an
// *Error saying what is wrong and where.
func Check(b []byte) error { return scan(b, false) }

// CheckRequest is Check for a request body: also an object at the top, with
// no top-level key repeated, compared after unescaping and ignoring case
// ("Model" repeats "model"): upstreams that decode with Go's encoding/json,
// and others, match member names case-insensitively.
func CheckRequest(b []byte) error { return scan(b, true) }

// class of each byte inside a string: 0 plain, 1 quote, 2 backslash, 3 control, 4 non-ASCII.
var strClass = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = 3
	}
	t['"'], t['\\'] = 1, 2
	for c := 0x80; c < 0x100; c++ {
		t[c] = 4
	}
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func syntax(i int, msg string) *Error { return &Error{Kind: Syntax, Offset: i, Msg: msg} }

// scanner holds the container stack: bit d of stack is 1 when level d is an object.
type scanner struct {
	b     []byte
	stack [MaxDepth / 64]uint64
	depth int
	keys  topKeys
	top   bool // collect and compare top-level keys
}

func (s *scanner) push(i int, obj bool) *Error {
	if s.depth == MaxDepth {
		return &Error{Kind: TooDeep, Offset: i, Msg: fmt.Sprintf("nesting deeper than %d levels", MaxDepth)}
	}
	w, bit := s.depth/64, uint64(1)<<(s.depth%64)
	if obj {
		s.stack[w] |= bit
	} else {
		s.stack[w] &^= bit
	}
	s.depth++
	return nil
}

func (s *scanner) inObject() bool {
	d := s.depth - 1
	return s.stack[d/64]&(uint64(1)<<(d%64)) != 0
}

func scan(b []byte, request bool) error {
	s := scanner{b: b, top: request}
	i := skipSpace(b, 0)
	if request && (i >= len(b) || b[i] != '{') {
		if i >= len(b) {
			return syntax(i, "empty document")
		}
		return &Error{Kind: NotObject, Offset: i, Msg: "the top-level value is not an object"}
	}
	var err *Error
value:
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return syntax(i, "unexpected end of input")
		}
		switch c := b[i]; {
		case c == '{':
			if err = s.push(i, true); err != nil {
				return err
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == '}' {
				s.depth--
				i++
				break
			}
			if i, err = s.key(i); err != nil {
				return err
			}
			continue value
		case c == '[':
			if err = s.push(i, false); err != nil {
				return err
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				s.depth--
				i++
				break
			}
			continue value
		case c == '"':
			if i, err = s.str(i); err != nil {
				return err
			}
		case c == 't':
			if i, err = lit(b, i, "true"); err != nil {
				return err
			}
		case c == 'f':
			if i, err = lit(b, i, "false"); err != nil {
				return err
			}
		case c == 'n':
			if i, err = lit(b, i, "null"); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if i, err = num(b, i); err != nil {
				return err
			}
		default:
			return syntax(i, "invalid character")
		}
		// After a value: close containers or move to the next element.
		for {
			if s.depth == 0 {
				if i = skipSpace(b, i); i != len(b) {
					return syntax(i, "data after the top-level value")
				}
				return nil
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return syntax(i, "unexpected end of input")
			}
			obj := s.inObject()
			switch c := b[i]; {
			case c == ',':
				i++
				if obj {
					if i, err = s.key(skipSpace(b, i)); err != nil {
						return err
					}
				}
				continue value
			case c == '}' && obj, c == ']' && !obj:
				s.depth--
				i++
			default:
				return syntax(i, "expected ',' or the end of the container")
			}
		}
	}
}

// key reads a member name and its ':' and returns the offset of the value.
func (s *scanner) key(i int) (int, *Error) {
	if i >= len(s.b) || s.b[i] != '"' {
		return i, syntax(i, "expected a string key")
	}
	end, err := s.str(i)
	if err != nil {
		return end, err
	}
	if s.top && s.depth == 1 {
		if err := s.keys.add(s.b[i:end], i); err != nil {
			return i, err
		}
	}
	end = skipSpace(s.b, end)
	if end >= len(s.b) || s.b[end] != ':' {
		return end, syntax(end, "expected ':' after a key")
	}
	return end + 1, nil
}

// str validates the string starting at b[i] == '"' and returns the offset after it.
func (s *scanner) str(i int) (int, *Error) {
	b := s.b
	j := i + 1
	for j < len(b) {
		// Prose is runs of plain ASCII: eight bytes at a time, straight to
		// the first byte that needs a look.
		for j+8 <= len(b) {
			if m := special8(binary.LittleEndian.Uint64(b[j:])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			break
		}
		switch strClass[b[j]] {
		case 0:
			j++
		case 1:
			return j + 1, nil
		case 2:
			if j+1 >= len(b) {
				return j, syntax(j, "unterminated escape")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
					return j, syntax(j, "invalid \\u escape")
				}
				j += 6
			default:
				return j, syntax(j, "invalid escape")
			}
		case 3:
			return j, syntax(j, "control character in a string")
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size <= 1 {
				return j, syntax(j, "invalid UTF-8 in a string")
			}
			j += size
		}
	}
	return j, syntax(j, "unterminated string")
}

// special8 marks (with its high bit) each of the eight bytes of x, read
// little-endian, that is a quote, a backslash, a control character or
// non-ASCII: the bytes that end a plain run (strClass 0). It uses the "has a
// zero byte" and "has a byte less than n" word tricks; a borrow can mark a
// byte above one that is really marked, never below, so the lowest mark is
// always the first such byte.
func special8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	control := (x - ones*0x20) &^ x
	quotes := (quote - ones) &^ quote
	backslashes := (backslash - ones) &^ backslash
	return (control | quotes | backslashes | x) & highs
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func lit(b []byte, i int, word string) (int, *Error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, syntax(i, "invalid literal")
	}
	return i + len(word), nil
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// num validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func num(b []byte, i int) (int, *Error) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, syntax(start, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, syntax(start, "invalid number")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, syntax(start, "invalid number")
		}
		i = j
	}
	return i, nil
}

// topKeys remembers the top-level keys seen so far: a small inline array for
// the usual dozen, a map past it.
type topKeys struct {
	small [24][]byte
	n     int
	big   map[string]struct{}
}

func (k *topKeys) add(raw []byte, off int) *Error {
	name := raw[1 : len(raw)-1]
	for _, c := range name {
		if c == '\\' {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return syntax(off, "invalid key")
			}
			name = []byte(s)
			break
		}
	}
	name = fold(name)
	dup := func() *Error {
		key := string(name)
		if len(key) > 64 {
			key = key[:64]
		}
		return &Error{Kind: Duplicate, Offset: off, Msg: "duplicate key", Key: key}
	}
	if k.big != nil {
		if _, ok := k.big[string(name)]; ok {
			return dup()
		}
		k.big[string(name)] = struct{}{}
		return nil
	}
	for _, seen := range k.small[:k.n] {
		if string(seen) == string(name) {
			return dup()
		}
	}
	if k.n < len(k.small) {
		k.small[k.n] = name
		k.n++
		return nil
	}
	k.big = make(map[string]struct{}, 2*len(k.small))
	for _, seen := range k.small[:k.n] {
		k.big[string(seen)] = struct{}{}
	}
	k.big[string(name)] = struct{}{}
	return nil
}

// fold returns name as a case-insensitive JSON reader matches it: ASCII
// letters lowered, other runes folded as encoding/json folds them (ſ is s, the
// Kelvin sign is k). Most names are lower-case ASCII and come back as they are.
func fold(name []byte) []byte {
	i := 0
	for i < len(name) && name[i] < utf8.RuneSelf && (name[i] < 'A' || name[i] > 'Z') {
		i++
	}
	if i == len(name) {
		return name
	}
	out := make([]byte, i, len(name)+4)
	copy(out, name[:i])
	for i < len(name) {
		c := name[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		out = utf8.AppendRune(out, unicode.ToLower(unicode.ToUpper(unicode.ToLower(r))))
		i += n
	}
	return out
}

// Is reports whether err is a jsonv error of kind k.
func Is(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}
