package connfields_test

import (
	"testing"

	"omniroute/backend/store"
)

// TestApplyWrites: what an accepted save stores: trimmed and lower-cased
// values, a cap of 0 lifted, the modelConcurrency shorthand merged into the
// overrides (null lifts it), model lists without duplicates, the schema's
// sealed key and the check's completed object.
func TestApplyWrites(t *testing.T) {
	tests := []struct {
		name, provider, body string
		check                func(t *testing.T, f fixture, row store.Connection)
	}{
		{"trimmed", keyed, `{"name":"  Mine  ","apiKey":"  k-1  ","baseUrl":" https://x.example/v1/ ","prefix":" Work_1 "}`, func(t *testing.T, f fixture, row store.Connection) {
			key, _ := f.box.Open(row.APIKeyEnc)
			if row.Name != "Mine" || key != "k-1" || row.BaseURL != "https://x.example/v1" || row.Prefix != "work_1" {
				t.Errorf("name %q key %q baseUrl %q prefix %q", row.Name, key, row.BaseURL, row.Prefix)
			}
		}},
		{"own prefix kept", keyed, `{"apiKey":"k-1","prefix":"mine"}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.Prefix != "mine" {
				t.Errorf("prefix %q", row.Prefix)
			}
		}},
		{"cap of 0 lifted", keyed, `{"apiKey":"k-1","maxConcurrent":0,"priority":7,"isActive":false}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.MaxConcurrent != nil || row.Priority != 7 || row.IsActive {
				t.Errorf("maxConcurrent %v priority %d active %v", row.MaxConcurrent, row.Priority, row.IsActive)
			}
		}},
		{"cap", keyed, `{"apiKey":"k-1","maxConcurrent":3}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.MaxConcurrent == nil || *row.MaxConcurrent != 3 {
				t.Errorf("maxConcurrent %v", row.MaxConcurrent)
			}
		}},
		{"model caps merged", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"maxWaitMs":5},"modelConcurrency":{"m1":2}}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.RateLimitOverrides != `{"maxWaitMs":5,"modelConcurrency":{"m1":2}}` {
				t.Errorf("overrides %s", row.RateLimitOverrides)
			}
		}},
		{"model caps lifted", keyed, `{"apiKey":"k-1","rateLimitOverrides":{"maxWaitMs":5,"modelConcurrency":{"m1":2}},"modelConcurrency":null}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.RateLimitOverrides != `{"maxWaitMs":5}` {
				t.Errorf("overrides %s", row.RateLimitOverrides)
			}
		}},
		{"models without duplicates", keyed, `{"apiKey":"k-1","models":[" m1","m1","m2"],"modelAliases":{" fast ":"m2"}}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.Models != `["m1","m2"]` || row.ModelAliases != `{"fast":"m2"}` {
				t.Errorf("models %s aliases %s", row.Models, row.ModelAliases)
			}
		}},
		{"local without key", local, `{"baseUrl":"http://127.0.0.1:1234/v1"}`, func(t *testing.T, f fixture, row store.Connection) {
			if row.APIKeyEnc != "" || row.AuthType != "none" {
				t.Errorf("key %q auth %q", row.APIKeyEnc, row.AuthType)
			}
		}},
		{"schema's key and the check's object", schemed, `{"providerSpecificData":{"region":"north","keyFile":"kf-1","localAddress":"127.0.0.1"}}`, func(t *testing.T, f fixture, row store.Connection) {
			key, _ := f.box.Open(row.APIKeyEnc)
			if key != "kf-1" || row.ProviderSpecificData != `{"localAddress":"127.0.0.1","project":"p-kf-1","region":"north"}` {
				t.Errorf("key %q data %s", key, row.ProviderSpecificData)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			row := f.newRow(t, tt.provider)
			if err := f.apply(t, &row, tt.provider, tt.body, true); err != nil {
				t.Fatal(err)
			}
			tt.check(t, f, row)
		})
	}
}

// TestApplyLiftsTerminal: an edit bringing new credentials lifts a
// terminal state (the way out of key_rejected, banned, expired); a new
// base URL lifts endpoint_not_found only; other edits and creates keep it.
func TestApplyLiftsTerminal(t *testing.T) {
	tests := []struct {
		name, status, body string
		creating           bool
		lifted             bool
	}{
		{"new key", "key_rejected", `{"apiKey":"k-2"}`, false, true},
		{"new token", "expired", `{"accessToken":"t-2"}`, false, true},
		{"new base URL after a 404", "endpoint_not_found", `{"baseUrl":"https://y.example/v1"}`, false, true},
		{"new base URL of a rejected key", "key_rejected", `{"baseUrl":"https://y.example/v1"}`, false, false},
		{"a rename", "key_rejected", `{"name":"Renamed"}`, false, false},
		{"a new refresh token alone", "expired", `{"refreshToken":"r-2"}`, false, false},
		{"a create", "key_rejected", `{"apiKey":"k-2"}`, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			row := f.newRow(t, keyed)
			if err := f.apply(t, &row, keyed, `{"apiKey":"k-1"}`, true); err != nil {
				t.Fatal(err)
			}
			row.TestStatus, row.LastError, row.ErrorCode, row.LastErrorAt = tt.status, "it failed", "SOME_CODE", 1_700_000_000_000
			if err := f.apply(t, &row, keyed, tt.body, tt.creating); err != nil {
				t.Fatal(err)
			}
			if lifted := row.TestStatus == "active" && row.LastError == "" && row.ErrorCode == ""; lifted != tt.lifted {
				t.Errorf("status %q error %q code %q: lifted %v, want %v", row.TestStatus, row.LastError, row.ErrorCode, lifted, tt.lifted)
			}
		})
	}
}
