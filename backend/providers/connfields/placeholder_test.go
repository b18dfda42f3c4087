package connfields

import "testing"

func TestPlaceholderKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"…", true}, {"...", true}, {"sk-...", true}, {"sk-…", true}, {"sk-ant-...", true}, {"YOUR_API_KEY", true},
		{"<key>", true}, {"<your key>", true}, {"{{API_KEY}}", true}, {"$OPENAI_API_KEY", true}, {"your-api-key-here", true},
		{"changeme", true}, {"OPENAI_API_KEY", true},
		{"", false}, {"sk-live-0123456789abcdef", false}, {"key-a", false}, {"AIzaSyA1234567890abcdefghijklmnopqrstuv", false},
		{"sk-proj-abcdefghijklmnop...", false}, {"ollama", false}, {"gk-backup", false},
		// A Vertex service account's key file is a JSON object, never a placeholder.
		{`{"type":"service_account","project_id":"p","private_key":"-----BEGIN PRIVATE KEY-----\\n"}`, false}, {`{"type": "service_account"}`, false},
	} {
		if got := placeholderKey(tc.key); got != tc.want {
			t.Errorf("placeholderKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
