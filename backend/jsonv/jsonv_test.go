package jsonv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	cases := []struct {
		in   string
		kind Kind // 0: valid
	}{
		{`{}`, 0}, {`[]`, 0}, {` "x" `, 0}, {`0`, 0}, {`-0.5e+10`, 0}, {`true`, 0}, {`null`, 0},
		{`{"a":[1,2,{"b":null}],"c":"\u00e9\n\"","d":false}`, 0},
		{`"é日本"`, 0}, {`"\ud83d\ude00"`, 0},
		{deep(MaxDepth), 0}, {deepObj(MaxDepth), 0},
		{deep(MaxDepth + 1), TooDeep}, {deepObj(MaxDepth + 1), TooDeep},
		{strings.Repeat("[", 9<<20), TooDeep},
		{``, Syntax}, {`   `, Syntax}, {`{`, Syntax}, {`[1,]`, Syntax}, {`{"a":1,}`, Syntax}, {`{"a" 1}`, Syntax},
		{`{1:2}`, Syntax}, {`[1 2]`, Syntax}, {`{} {}`, Syntax}, {`01`, Syntax}, {`1.`, Syntax}, {`1e`, Syntax},
		{`-`, Syntax}, {`.5`, Syntax}, {`tru`, Syntax}, {`nul`, Syntax}, {`"abc`, Syntax}, {`"\x"`, Syntax},
		{`"\u12G4"`, Syntax}, {"\"a\x01b\"", Syntax}, {"\"\xff\"", Syntax}, {"\"\xc3\"", Syntax},
		{`[}`, Syntax}, {`{]`, Syntax}, {`]`, Syntax}, {`"\`, Syntax}, {`+1`, Syntax},
	}
	for _, c := range cases {
		name := c.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			err := Check([]byte(c.in))
			if c.kind == 0 {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want valid", name, err)
				}
				return
			}
			if !Is(err, c.kind) {
				t.Fatalf("Check(%q) = %v, want kind %d", name, err, c.kind)
			}
		})
	}
}

func TestCheckRequest(t *testing.T) {
	many := func(n int, dupe bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		if dupe {
			b.WriteString(`"k3":0,`)
		}
		b.WriteString(`"z":1}`)
		return b.String()
	}
	cases := []struct {
		in   string
		kind Kind
		key  string
	}{
		{`{"model":"a","messages":[]}`, 0, ""},
		{`{"model":"a","x":{"model":"b"},"y":[{"model":1}]}`, 0, ""}, // nested repeats are fine
		{`{"model":"a","messages":[],"model":"b"}`, Duplicate, "model"},
		{`{"model":"a","mod\u0065l":"b"}`, Duplicate, "model"}, // escaped spelling of the same key
		{`{"a\/b":1,"a/b":2}`, Duplicate, "a/b"},
		// Case variants: a case-insensitive reader (encoding/json) takes the last.
		{`{"model":"a","Model":"b"}`, Duplicate, "model"},
		{`{"model":"a","MODEL":"b"}`, Duplicate, "model"},
		{`{"model":"a","\u004dodel":"b"}`, Duplicate, "model"},
		{`{"MoDeL":"a","model":"b"}`, Duplicate, "model"},
		{`{"messages":[],"me\u017f\u017fages":[]}`, Duplicate, "messages"}, // ſ folds to s
		{`{"stream":true,"STREAM":false}`, Duplicate, "stream"},
		{"{\"kind\":1,\"\u212aind\":2}", Duplicate, "kind"}, // the Kelvin sign folds to k
		{`{"model":"a","modelx":"b","Mode":1}`, 0, ""},
		{many(10, true), Duplicate, "k3"},
		{many(100, false), 0, ""},
		{many(100, true), Duplicate, "k3"},
		{`[]`, NotObject, ""}, {`"x"`, NotObject, ""}, {`  `, Syntax, ""},
		{`{"a":1}{"a":1}`, Syntax, ""},
	}
	for _, c := range cases {
		err := CheckRequest([]byte(c.in))
		if c.kind == 0 {
			if err != nil {
				t.Errorf("CheckRequest(%.40q) = %v, want nil", c.in, err)
			}
			continue
		}
		if !Is(err, c.kind) {
			t.Errorf("CheckRequest(%.40q) = %v, want kind %d", c.in, err, c.kind)
			continue
		}
		if c.key != "" && err.(*Error).Key != c.key {
			t.Errorf("CheckRequest(%.40q) key = %q, want %q", c.in, err.(*Error).Key, c.key)
		}
	}
}

// TestAgreesWithEncodingJSON: on inputs encoding/json accepts as valid UTF-8
// JSON, jsonv only refuses nesting; what jsonv accepts, encoding/json accepts.
func TestAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{`{"a":[1,2.5e3,-0,"\u0041"]}`, `[[[[]]]]`, `"\/"`, `1E-2`, `[1,[2,[3,{"x":{}}]]]`} {
		if Valid([]byte(in)) != json.Valid([]byte(in)) {
			t.Errorf("%q: jsonv %v, encoding/json %v", in, Valid([]byte(in)), json.Valid([]byte(in)))
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}]}`, `[]`, `"\u00e9"`, `{"a":1,"a":2}`, `[[[[`, "\"\xff\"", `-1.5e3`, `{"model":"x","messages":[{"role":"user","content":"hi"}]}`, `{"a":0,"a":00`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b)
		std := json.Valid(b)
		if err == nil && !std {
			t.Fatalf("jsonv accepts what encoding/json rejects: %q", b)
		}
		if err != nil && std && utf8.Valid(b) && !Is(err, TooDeep) {
			t.Fatalf("jsonv rejects valid JSON: %q: %v", b, err)
		}
		rerr := CheckRequest(b)
		if rerr == nil {
			if err != nil {
				t.Fatalf("CheckRequest accepts what Check rejects: %q", b)
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) != nil {
				t.Fatalf("CheckRequest accepts a non-object: %q", b)
			}
		}
		if Is(rerr, Duplicate) && std {
			// A valid document refused as a duplicate, decoded as an ordered key
			// list, must repeat a key. (An invalid one may be refused for the
			// duplicate it shows before the point where it breaks.)
			if !repeatsAKey(t, b) {
				t.Fatalf("CheckRequest reports a duplicate in %q, which has none", b)
			}
		}
		if err == nil && std && rerr == nil && b[0] == '{' && repeatsAKey(t, b) {
			t.Fatalf("CheckRequest accepts %q, whose keys a case-insensitive reader confuses", b)
		}
	})
}

// repeatsAKey decodes the keys of the object b in order and reports whether
// two of them name the same member for encoding/json (equal after unescaping,
// ignoring case as it does).
func repeatsAKey(t *testing.T, b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	_, _ = dec.Token()
	seen := map[string]bool{}
	dup := false
	for dec.More() {
		tok, terr := dec.Token()
		if terr != nil {
			t.Fatalf("decoding keys of %q: %v", b, terr)
		}
		k := jsonFold(tok.(string))
		dup = dup || seen[k]
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return dup
}

// jsonFold folds a member name as encoding/json's case-insensitive match does.
func jsonFold(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, s)
}

// FuzzCaseVariantOfAKey: every spelling of a routed key that a case-insensitive
// reader takes for it — case flipped, letters \u-escaped — is refused beside it.
func FuzzCaseVariantOfAKey(f *testing.F) {
	for _, seed := range []uint64{0, 1, 0xff, 0x5555, 1 << 40} {
		f.Add(uint8(0), seed)
	}
	keys := []string{"model", "messages", "input", "stream", "previous_response_id"}
	f.Fuzz(func(t *testing.T, which uint8, bitsIn uint64) {
		key := keys[int(which)%len(keys)]
		var v strings.Builder
		for i, r := range key {
			upper := bitsIn>>(2*uint(i)%64)&1 == 1
			escape := bitsIn>>((2*uint(i)+1)%64)&1 == 1
			if upper {
				r = unicode.ToUpper(r)
			}
			if escape {
				fmt.Fprintf(&v, `\u%04x`, r)
			} else {
				v.WriteRune(r)
			}
		}
		doc := []byte(`{"` + key + `":"a","x":1,"` + v.String() + `":"b"}`)
		if !Is(CheckRequest(doc), Duplicate) {
			t.Fatalf("CheckRequest(%s) = %v, want a duplicate", doc, CheckRequest(doc))
		}
	})
}

// body builds a chat request of about n bytes: many messages of prose.
func body(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"openai/gpt-4o-mini","stream":true,"messages":[`)
	line := `{"role":"user","content":"The quick brown fox jumps over the lazy dog, naïvely \"quoting\" things\n and more text."},`
	for b.Len() < n-len(line) {
		b.WriteString(line)
	}
	b.WriteString(`{"role":"user","content":"end"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}}]}`)
	return b.Bytes()
}

func benchCheck(b *testing.B, n int) {
	in := body(n)
	if err := CheckRequest(in); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckRequest(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckRequest10KB(b *testing.B) { benchCheck(b, 10<<10) }
func BenchmarkCheckRequest1MB(b *testing.B)  { benchCheck(b, 1<<20) }

// firstSpecial is the index of the first byte of w (little-endian) that ends
// a plain run inside a string, or 8.
func firstSpecial(w uint64) int {
	for i := range 8 {
		if strClass[byte(w>>(8*i))] != 0 {
			return i
		}
	}
	return 8
}

// TestSpecial8 holds the word-at-a-time test to the byte table: every byte
// value at every position among plain bytes, every pair of bytes in the two
// lowest positions (borrows run upward), and random words.
func TestSpecial8(t *testing.T) {
	check := func(w uint64) {
		t.Helper()
		got := 8
		if m := special8(w); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := firstSpecial(w); got != want {
			t.Fatalf("special8(%#016x): first byte to look at %d, want %d", w, got, want)
		}
	}
	const plain = 0x6161616161616161 // "aaaaaaaa"
	for p := range 8 {
		for v := range 256 {
			check(plain&^(0xff<<(8*p)) | uint64(v)<<(8*p))
		}
	}
	for v0 := range 256 {
		for v1 := range 256 {
			check(plain&^0xffff | uint64(v1)<<8 | uint64(v0))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		w := r.Uint64()
		check(w)
		check(w & 0x7f7f7f7f7f7f7f7f) // ASCII only
	}
}
