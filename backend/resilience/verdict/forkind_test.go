package verdict

import "testing"

// TestForKindMatchesClassify: a rule's verdict for a kind reads exactly like
// the classifier's own verdict for an answer of that kind.
func TestForKindMatchesClassify(t *testing.T) {
	cases := []struct {
		kind   Kind
		status int
		body   string
	}{
		{KindQuota, 429, `{"error":{"message":"quota exceeded for today"}}`},
		{KindRateLimit, 429, `{"error":{"message":"slow down"}}`},
		{KindAuth, 401, `{"error":{"message":"invalid api key"}}`},
		{KindServer, 500, `{"error":{"message":"boom"}}`},
		{KindNotFound, 404, `{"error":{"message":"no such model"}}`},
		{KindBadRequest, 400, `{"error":{"message":"bad field"}}`},
	}
	for _, c := range cases {
		got := Classify(Outcome{Status: c.status, Body: []byte(c.body)})
		want := ForKind(c.kind)
		if got.Kind != c.kind || got.Scope != want.Scope || got.Failover != want.Failover || got.CoolConnection != want.CoolConnection ||
			got.CountsForBreaker != want.CountsForBreaker || got.SkipProviderBreaker != want.SkipProviderBreaker || got.Code != want.Code {
			t.Errorf("%s: classifier %+v, ForKind %+v", c.kind, got, want)
		}
		if m := Message(c.kind, c.status, []byte(c.body)); m != got.Message {
			t.Errorf("%s: Message %q, classifier %q", c.kind, m, got.Message)
		}
	}
}
