package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// The credentials of the tables: fake, in each provider's real shape.
const (
	awsID     = "AKIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	pemKey    = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9\nZx3Yq1w2e3r4t5y6u7i8o9p0\n-----END RSA PRIVATE KEY-----"
	ghp       = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	gho       = "gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
	githubPAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"
	slackBot  = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackUser = "xoxp-123456789012-1234567890123-1234567890123-abcdef0123456789"
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	ya29      = "ya29.a0AfH6SMBx1y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7O8p9Q0r"
	skKey     = "sk-proj-abcdefghijklmnop1234"
	googleKey = "AIzaSyA1234567890abcdefghijklmnopqrstu"
	hfToken   = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
)

// TestAllRedactsEveryShape: each credential shape, in JSON, SSE and plain
// text, leaves nothing of itself; ordinary text and JSON validity stay.
func TestAllRedactsEveryShape(t *testing.T) {
	for _, c := range []struct {
		name, in string
		gone     []string
		keep     []string
	}{
		{"AWS key id", `{"note":"id ` + awsID + ` here"}`, []string{awsID, "IOSFODNN7"}, []string{`"note"`, " here"}},
		{"AWS secret after aws word", `{"cfg":"aws_secret_access_key = ` + awsSecret + `"}`, []string{awsSecret[:20]}, []string{"aws_secret_access_key"}},
		{"AWS secret after key id", "id " + awsID + " and " + awsSecret, []string{awsSecret[:20]}, []string{" and "}},
		{"AWS secret env line in SSE", "data: {\"t\":\"export AWS_SECRET_ACCESS_KEY=" + awsSecret + "\"}\n\n", []string{awsSecret[:20]}, []string{"data: ", "\n\n"}},
		{"PEM key in JSON", mustJSON(map[string]string{"file": "x\n" + pemKey + "\ny"}), []string{"MIIEowIBAAKCAQEA", "Zx3Yq1w2"}, []string{`"file"`}},
		{"PEM key raw", "before\n" + pemKey + "\nafter", []string{"MIIEowIBAAKCAQEA", "Zx3Yq1w2"}, []string{"before\n", "\nafter"}},
		{"PEM key cut short", "k: " + pemKey[:60], []string{"MIIEowIB"}, []string{"k: "}},
		{"PEM key cut in a JSON string", `{"a":"` + strings.ReplaceAll(pemKey[:60], "\n", `\n`) + `","b":1}`, []string{"MIIEowIB"}, []string{`"b":1`}},
		{"PGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----", []string{"lQOYBF0"}, nil},
		{"GitHub ghp", `{"t":"use ` + ghp + `"}`, []string{ghp[:12]}, nil},
		{"GitHub gho", "text " + gho, []string{gho[:12]}, nil},
		{"GitHub fine-grained", `{"x":"` + githubPAT + `"}`, []string{githubPAT[:20]}, nil},
		{"Slack bot", `{"x":"` + slackBot + `"}`, []string{"123456789012-1234567890123"}, nil},
		{"Slack user", "token " + slackUser, []string{"123456789012-1234567890123"}, nil},
		{"JWT", `{"jwt_like":"` + jwt + `"}`, []string{"eyJhbGciOiJIUzI1NiIs", "dozjgNryP4J3"}, nil},
		{"Google ya29", `{"x":"` + ya29 + `"}`, []string{ya29[:12]}, nil},
		{"Google API key", `{"x":"` + googleKey + `"}`, []string{googleKey[:12]}, nil},
		{"Hugging Face", "hf " + hfToken, []string{hfToken[:12]}, nil},
		{"sk key", `{"x":"` + skKey + `"}`, []string{skKey[:11]}, nil},
		{"bearer any characters", `Authorization: Bearer abc&%$!key0001 rest`, []string{"abc", "key0001"}, []string{"Bearer [redacted] rest"}},
		{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", []string{"dXNlcjpw"}, nil},
		{"query key", `{"u":"https://h/p?alt=sse&key=s3cr3tvalue&x=1"}`, []string{"s3cr3tvalue"}, []string{"alt=sse", "&x=1"}},
		{"escaped member name", `{"api\u005fkey":"plainvalue1","model":"m"}`, []string{"plainvalue1"}, []string{`"model":"m"`}},
		{"escaped member name fully", `{"\u0061\u0070\u0069\u004b\u0065\u0079":"plainvalue2"}`, []string{"plainvalue2"}, nil},
		{"private_key member", `{"type":"service_account","private_key":"opaque-value-3","client_email":"a@b"}`, []string{"opaque-value-3"}, []string{`"client_email":"a@b"`}},
		{"session_token member", `{"session_token":"opaque-value-4"}`, []string{"opaque-value-4"}, nil},
		{"secret_access_key member", `{"SecretAccessKey":"opaque-value-5","AccessKeyId":"id1"}`, []string{"opaque-value-5"}, []string{`"AccessKeyId":"id1"`}},
		{"suffixed member", `{"openai_api_key":"opaque-value-6","db_password":"opaque-value-7"}`, []string{"opaque-value-6", "opaque-value-7"}, nil},
		{"member in tool arguments", `{"arguments":"{\"api_key\":\"opaque-value-8\",\"q\":\"weather\"}"}`, []string{"opaque-value-8"}, []string{`weather`}},
		{"member value cut short", `{"password":"opaque-val`, []string{"opaque-val"}, []string{`"password":"[redacted]"`}},
		{"member with spaces", `{ "password" : "opaque-value-9" }`, []string{"opaque-value-9"}, nil},
		{"logprob token kept", `{"logprobs":[{"token":"Hello","logprob":-0.1}],"usage":{"prompt_tokens":3}}`, nil, []string{`"token":"Hello"`, `"prompt_tokens":3`}},
		{"bearer and basic as words kept", `{"t":"Basic authentication needs the bearer instrument"}`, nil, []string{"Basic authentication", "bearer instrument"}},
		{"ordinary text kept", `{"messages":[{"role":"user","content":"ask a task-based question about disk-usage"}]}`, nil, []string{"ask a task-based question about disk-usage"}},
		{"40 characters without context kept", `{"sha":"0123456789abcdef0123456789abcdef01234567"}`, nil, []string{"0123456789abcdef0123456789abcdef01234567"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := All(c.in, nil)
			for _, g := range c.gone {
				if strings.Contains(out, g) {
					t.Errorf("%q survived: %s", g, out)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("%q lost: %s", k, out)
				}
			}
			if !strings.Contains(out, Mark) && len(c.gone) > 0 {
				t.Errorf("nothing marked: %s", out)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(out)) {
				t.Errorf("redaction broke the JSON: %s", out)
			}
		})
	}
}

// TestKnownGoesBeforeShapes: a known credential of any characters is removed
// whole, in each spelling an upstream echoes it, before a shape could cut it
// and leave its tail ("Bearer [redacted]&%key0001").
func TestKnownGoesBeforeShapes(t *testing.T) {
	const sec = "tok-AB12&%key0001"
	for _, in := range []string{
		"invalid credential: Bearer " + sec,
		`{"error":{"message":"Bearer tok-AB12\u0026%key0001 is not valid"}}`,
		"https://h/v1?key=" + "tok-AB12%26%25key0001",
		"https://h/v1/" + "tok-AB12&%25key0001" + "/x",
	} {
		out := All(in, []string{sec})
		if strings.Contains(out, "key0001") || strings.Contains(out, "AB12") {
			t.Errorf("the key's tail survived in %q: %s", in, out)
		}
		if !strings.Contains(out, Mark) {
			t.Errorf("nothing marked: %s", out)
		}
	}
	if got := Known("ab ab", []string{"ab"}); got != "ab ab" {
		t.Errorf("a secret shorter than %d was removed: %s", MinSecretLen, got)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "X-Goog-Api-Key": true, "private_key": true, "session_token": true, "secret_access_key": true,
		"aws_secret_access_key": true, "clientSecret": true, "refresh_token": true, "Authorization": true, "passphrase": true,
		"token": false, "prompt_tokens": false, "model": false, "access_key_id": false, "max_tokens": false, "keyId": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzAllKeepsJSONValid: redaction never turns valid JSON invalid, and a
// known secret never survives it.
func FuzzAllKeepsJSONValid(f *testing.F) {
	for _, s := range []string{
		`{"api_key":"v","x":[1,"Bearer abcdefgh123"]}`,
		`{"arguments":"{\"password\":\"p\\\"q\"}"}`,
		`{"a":"-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----","b":"AKIAIOSFODNN7EXAMPLE"}`,
		`{"api\u005fkey":"x","s":"tok&%key0001"}`,
		`["sk-abcdefghijklmnopqr", {"token":"t"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := All(s, []string{"tok&%key0001"})
		if json.Valid([]byte(s)) && !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON made invalid:\n in %s\nout %s", s, out)
		}
		if strings.Contains(out, "tok&%key0001") {
			t.Fatalf("known secret survived: %s", out)
		}
	})
}
