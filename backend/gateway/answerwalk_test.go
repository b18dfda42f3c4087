package gateway

import (
	"fmt"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
	"omniroute/backend/translate"
)

// usageByGet is readUsage as it was: a gjson Get per field.
func usageByGet(u gjson.Result) usageCounts {
	c := usageCounts{in: int(u.Get("prompt_tokens").Int() + u.Get("input_tokens").Int()),
		out: int(u.Get("completion_tokens").Int() + u.Get("output_tokens").Int())}
	for _, path := range []string{"prompt_tokens_details.cached_tokens", "input_tokens_details.cached_tokens",
		"cache_read_input_tokens", "prompt_cache_hit_tokens"} {
		if v := u.Get(path).Int(); v > 0 {
			c.cached = int(v)
			break
		}
	}
	return c
}

var usageCases = []struct {
	name string
	json string
	want usageCounts
}{
	{"openai", `{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":4}}`, usageCounts{9, 12, 4}},
	{"responses", `{"input_tokens":7,"input_tokens_details":{"cached_tokens":3},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2}}`, usageCounts{7, 5, 3}},
	{"anthropic", `{"input_tokens":11,"cache_creation_input_tokens":2,"cache_read_input_tokens":6,"output_tokens":8}`, usageCounts{11, 8, 6}},
	{"deepseek", `{"prompt_tokens":20,"completion_tokens":1,"prompt_cache_hit_tokens":16,"prompt_cache_miss_tokens":4}`, usageCounts{20, 1, 16}},
	{"zero details, then a later source", `{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":0},"prompt_cache_hit_tokens":2}`, usageCounts{5, 0, 2}},
	{"precedence: details first", `{"prompt_cache_hit_tokens":9,"cache_read_input_tokens":8,"input_tokens_details":{"cached_tokens":7},"prompt_tokens_details":{"cached_tokens":6}}`, usageCounts{0, 0, 6}},
	{"both spellings add up", `{"prompt_tokens":1,"input_tokens":2,"completion_tokens":3,"output_tokens":4}`, usageCounts{3, 7, 0}},
	{"repeated key: the first counts", `{"prompt_tokens":1,"prompt_tokens":100,"prompt_tokens_details":{"cached_tokens":0},"prompt_tokens_details":{"cached_tokens":50}}`, usageCounts{1, 0, 0}},
	{"escaped key", `{"prompt\u005ftokens":3,"completion_tokens":2}`, usageCounts{3, 2, 0}},
	{"strings and nulls", `{"prompt_tokens":"12","completion_tokens":null,"cache_read_input_tokens":"x"}`, usageCounts{12, 0, 0}},
	{"negative cached ignored", `{"prompt_tokens_details":{"cached_tokens":-3},"cache_read_input_tokens":2}`, usageCounts{0, 0, 2}},
	{"not an object", `[1,2]`, usageCounts{}},
	{"empty", ``, usageCounts{}},
}

// TestReadUsage: one walk over the usage object reads what a Get per field
// read, in every provider's spelling, with repeated and escaped keys.
func TestReadUsage(t *testing.T) {
	for _, c := range usageCases {
		t.Run(c.name, func(t *testing.T) {
			u := gjson.Parse(c.json)
			if got, ref := readUsage(u), usageByGet(u); got != c.want || ref != c.want {
				t.Fatalf("readUsage = %+v, by Get %+v, want %+v", got, ref, c.want)
			}
		})
	}
}

// FuzzReadUsage: readUsage and a Get per field agree on any valid usage object.
func FuzzReadUsage(f *testing.F) {
	for _, c := range usageCases {
		f.Add(c.json)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) {
			return
		}
		u := gjson.Parse(s)
		if got, ref := readUsage(u), usageByGet(u); got != ref {
			t.Fatalf("readUsage(%s) = %+v, by Get %+v", s, got, ref)
		}
	})
}

// checkAnswerByGet is codec.checkAnswer's verdict as it was: a Get per member.
func checkAnswerByGet(up translate.Format, text string) bool {
	root := gjson.Parse(text)
	if root.Get("error").IsObject() {
		return false
	}
	switch up {
	case translate.Messages:
		return root.Get("type").String() == "message"
	case translate.Responses:
		return root.Get("object").String() == "response"
	}
	return root.Get("choices").IsArray()
}

var answerCases = []string{
	`{"id":"c","object":"chat.completion","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1}}`,
	`{"id":"m","type":"message","content":[{"type":"text","text":"x"}]}`,
	`{"id":"r","object":"response","output":[]}`,
	`{"error":{"message":"over quota","type":"rate_limit"}}`,
	`{"error":"a string is not an error object","choices":[]}`,
	`{"choices":{},"choices":[]}`,
	`{"type":"message","type":"error"}`,
	`{"type":"error","type":"message"}`,
	`{"error":null,"error":{"message":"second"},"choices":[]}`,
	`{"choices":[],"error":{"message":"late"}}`,
	`[{"choices":[]}]`,
	`"choices"`,
	`{"ch\u006fices":[],"\u0074ype":"message","obj\u0065ct":"response"}`,
	`{"model":"first","choices":[],"model":"second","usage":{"prompt_tokens":2},"usage":null}`,
	`{"m\u006fdel":"escaped","choices":[],"us\u0061ge":{"completion_tokens":3}}`,
	`{"choices":[{"model":"inner","usage":{"prompt_tokens":9}}],"type":"message","object":"response"}`,
	`{"usage":{"prompt_tokens":1,"completion_tokens":2},"model":"gpt-4o-mini","type":"message","choices":[]}`,
	`{}`,
}

// checkAnswerWalk is codec.checkAnswer's verdict, and a mismatch ("" when
// none) between the model and usage its walk read and a Get of each.
func checkAnswerWalk(up translate.Format, a string) (ok bool, mismatch string) {
	var top answerTop
	ok = (codec{client: up, upstream: up}).checkAnswer([]byte(a), a, &top) == nil
	if !ok {
		return false, ""
	}
	if !top.read {
		return ok, "the walk did not mark model and usage read"
	}
	for _, m := range []struct {
		name      string
		walk, get gjson.Result
	}{{"model", top.model, gjson.Get(a, "model")}, {"usage", top.usage, gjson.Get(a, "usage")}} {
		if m.walk.Raw != m.get.Raw || m.walk.Exists() != m.get.Exists() || m.walk.String() != m.get.String() {
			return ok, fmt.Sprintf("%s: walk %q, Get %q", m.name, m.walk.Raw, m.get.Raw)
		}
	}
	return ok, ""
}

// TestCheckAnswerWalkIsTheGets: the one walk over an answer's top level
// accepts and refuses what a Get per member did, in every upstream format,
// and reads the model and usage a Get of each reads.
func TestCheckAnswerWalkIsTheGets(t *testing.T) {
	for _, up := range []translate.Format{translate.Chat, translate.Messages, translate.Responses} {
		for _, a := range answerCases {
			got, mismatch := checkAnswerWalk(up, a)
			if want := checkAnswerByGet(up, a); got != want {
				t.Errorf("%v %s: accepted %v, a Get per member %v", up, a, got, want)
			}
			if mismatch != "" {
				t.Errorf("%v %s: %s", up, a, mismatch)
			}
		}
	}
}

// FuzzCheckAnswer: the walk and the Gets agree on any valid answer.
func FuzzCheckAnswer(f *testing.F) {
	for _, a := range answerCases {
		f.Add(a, uint8(0))
	}
	formats := []translate.Format{translate.Chat, translate.Messages, translate.Responses}
	f.Fuzz(func(t *testing.T, a string, which uint8) {
		if !jsonv.Valid([]byte(a)) {
			return
		}
		up := formats[int(which)%len(formats)]
		got, mismatch := checkAnswerWalk(up, a)
		if want := checkAnswerByGet(up, a); got != want {
			t.Fatalf("%v %s: accepted %v, a Get per member %v", up, a, got, want)
		}
		if mismatch != "" {
			t.Fatalf("%v %s: %s", up, a, mismatch)
		}
	})
}
