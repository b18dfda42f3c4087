package anthropic

import (
	"strings"
	"testing"

	"omniroute/backend/translate"
	"omniroute/backend/translate/sse"
)

// benchStream feeds a captured-like stream repeatedly, reporting the cost per
// upstream event.
func benchStream(b *testing.B, newTr func() translate.StreamTranslator, in []sse.Event) {
	b.Helper()
	dst := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr := newTr()
		dst = dst[:0]
		var err error
		for _, e := range in {
			if dst, err = tr.Event(dst, e); err != nil {
				b.Fatal(err)
			}
		}
		if !tr.Complete() {
			b.Fatal("incomplete")
		}
		dst = tr.End(dst)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in))/1000, "µs/event")
}

// chatBenchInput: 200 text deltas, then a tool call in 100 argument pieces,
// finish, usage, [DONE] — the shape of a typical agent turn.
func chatBenchInput() []sse.Event {
	lines := []string{deltaChunk(`{"role":"assistant","content":""}`)}
	for i := 0; i < 200; i++ {
		lines = append(lines, deltaChunk(`{"content":"token "}`))
	}
	args := `{"file_path":"/src/main.go","content":"` + strings.Repeat("x", 500) + `"}`
	lines = append(lines, toolArgChunks(0, "call_bench", "Write", args, len(args)/100+1)...)
	lines = append(lines, finishChunk("tool_calls"), chatUsageChunk, "[DONE]")
	return sseInput(lines...)
}

func anthropicBenchInput() []sse.Event {
	lines := []string{antEv("message_start", antStart), antBlockStart(0, `{"type":"text","text":""}`)}
	for i := 0; i < 200; i++ {
		lines = append(lines, antDelta(0, `{"type":"text_delta","text":"token "}`))
	}
	lines = append(lines, antBlockStop(0))
	args := `{"file_path":"/src/main.go","content":"` + strings.Repeat("x", 500) + `"}`
	lines = append(lines, antToolBlock(1, "toolu_bench", "Write", args, len(args)/100+1)...)
	lines = append(lines, antMsgDelta("tool_use", 300), antEv("message_stop", antStop))
	return sseInput(lines...)
}

func BenchmarkStreamFromChat(b *testing.B) {
	benchStream(b, func() translate.StreamTranslator { return NewStreamFromChat("m") }, chatBenchInput())
}

func BenchmarkStreamToChat(b *testing.B) {
	benchStream(b, func() translate.StreamTranslator { return NewStreamToChat("m") }, anthropicBenchInput())
}
