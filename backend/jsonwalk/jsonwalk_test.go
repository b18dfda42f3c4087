package jsonwalk

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestMember(t *testing.T) {
	long := `"x\"` + strings.Repeat("a", 100) + `\\"`
	tests := []struct {
		name, obj, key, want string
	}{
		{"first", `{"a":1,"b":2}`, "a", "1"},
		{"last", `{"a":1,"b":2}`, "b", "2"},
		{"absent", `{"a":1}`, "b", ""},
		{"nested skipped", `{"x":{"b":[1,{"b":3}]},"b":"top"}`, "b", `"top"`},
		{"escaped quote in string", `{"a":"q\"b\":1","b":true}`, "b", "true"},
		{"backslash before quote", `{"a":"x\\","b":null}`, "b", "null"},
		{"long string with escapes", `{"a":` + long + `,"b":[]}`, "b", "[]"},
		{"braces in strings", `{"a":"}{][","b":{"c":"]"}}`, "b", `{"c":"]"}`},
		{"whitespace", " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\" :\"v\" } ", "a", "[ 1 , 2 ]"},
		{"duplicate keeps first", `{"a":1,"a":2}`, "a", "1"},
		{"empty object", `{}`, "a", ""},
		{"not an object", `[{"a":1}]`, "a", ""},
		{"truncated", `{"a":"unterminated`, "a", `"unterminated`},
		{"truncated after colon", `{"a":`, "a", ""},
		{"escaped key kept as written", `{"\u0061":1}`, "a", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Member(tc.obj, tc.key); got != tc.want {
				t.Fatalf("Member(%q, %q) = %q, want %q", tc.obj, tc.key, got, tc.want)
			}
		})
	}
}

func TestElementsAndStr(t *testing.T) {
	var got []string
	n := Elements(`[1, "two" ,{"3":[3]}, [] ]tail`, func(tail string) int {
		got = append(got, Value(tail))
		return 0
	})
	want := []string{"1", `"two"`, `{"3":[3]}`, "[]"}
	if len(got) != len(want) || n != len(`[1, "two" ,{"3":[3]}, [] ]`) {
		t.Fatalf("elements = %q (len %d), want %q", got, n, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %q, want %q", i, got[i], want[i])
		}
	}
	strs := []struct{ raw, want string }{
		{`"plain"`, "plain"},
		{`"a\nb"`, "a\nb"},
		{`"\u00e9"`, "é"},
		{`"\ud83d\ude00"`, "😀"},
		{`""`, ""},
		{`null`, ""},
		{`12`, ""},
		{`"`, ""},
	}
	for _, tc := range strs {
		if got := Str(tc.raw); got != tc.want {
			t.Errorf("Str(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// FuzzMember checks the walker against gjson on valid JSON objects: every simple
// key gjson finds, the walker finds with the same raw value.
func FuzzMember(f *testing.F) {
	seeds := []string{
		`{"a":1,"b":"x"}`,
		`{"choices":[{"delta":{"content":"h\"i"}}],"usage":null}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":"\\"}}`,
		`{"a":{"b":{"c":[1,2,{"d":"}"}]}},"e":-1.5e3,"f":true}`,
	}
	for _, s := range seeds {
		f.Add(s, "a")
		f.Add(s, "delta")
	}
	f.Fuzz(func(t *testing.T, obj, key string) {
		if !gjson.Valid(obj) || !simpleKey(key) {
			return
		}
		root := gjson.Parse(obj)
		if !root.IsObject() {
			return
		}
		want := root.Get(key)
		got := Member(obj, key)
		if want.Exists() != (got != "") || (want.Exists() && want.Raw != got) {
			t.Fatalf("Member(%q, %q) = %q, gjson %q (exists %v)", obj, key, got, want.Raw, want.Exists())
		}
		if want.Type == gjson.String && Str(got) != want.Str {
			t.Fatalf("Str(%q) = %q, gjson %q", got, Str(got), want.Str)
		}
	})
}

// simpleKey reports whether key has no gjson path syntax.
func simpleKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// TestFields: one walk finds each named member's first value, escaped keys
// included, and leaves "" for a key the object lacks.
func TestFields(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want [3]string
	}{
		{`{"a":1,"b":"x","c":[2]}`, [3]string{`1`, `"x"`, `[2]`}},
		{`{"c":{"a":0},"a":true}`, [3]string{`true`, ``, `{"a":0}`}},
		{`{"a":1,"a":2,"\u0062":null}`, [3]string{`1`, `null`, ``}},
		{` { "b" : "y" } `, [3]string{``, `"y"`, ``}},
		{`[{"a":1}]`, [3]string{}},
		{``, [3]string{}},
	} {
		var got [3]string
		Fields(c.obj, []string{"a", "b", "c"}, got[:])
		if got != c.want {
			t.Errorf("Fields(%s) = %q, want %q", c.obj, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		var v [2]string
		Fields(`{"role":"user","content":"hi"}`, []string{"role", "content"}, v[:])
	}); n != 0 {
		t.Errorf("Fields allocates %v times", n)
	}
}
