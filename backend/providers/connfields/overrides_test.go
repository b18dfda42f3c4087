package connfields

import (
	"encoding/json"
	"errors"
	"testing"

	"omniroute/backend/errs"
)

// TestMergeOverrides: a PATCH's rateLimitOverrides merge key by key into
// the stored object (null removes a key); anything but an object is
// INVALID_FIELD on rateLimitOverrides.
func TestMergeOverrides(t *testing.T) {
	tests := []struct {
		stored, patch, want, code string
	}{
		{`{"maxWaitMs":5,"minTimeMs":1}`, `{"maxWaitMs":9,"requestsPerMinute":60}`, `{"maxWaitMs":9,"minTimeMs":1,"requestsPerMinute":60}`, ""},
		{`{"maxWaitMs":5,"minTimeMs":1}`, `{"minTimeMs":null}`, `{"maxWaitMs":5}`, ""},
		{``, `{"maxWaitMs":5}`, `{"maxWaitMs":5}`, ""},
		{`not json`, `{"maxWaitMs":5}`, `{"maxWaitMs":5}`, ""},
		{`{}`, `[1]`, "", "INVALID_FIELD"},
		{`{}`, `null`, "", "INVALID_FIELD"},
	}
	for _, tt := range tests {
		got, err := MergeOverrides(tt.stored, json.RawMessage(tt.patch))
		if tt.code != "" {
			var e *errs.Error
			if !errors.As(err, &e) || e.Code != tt.code || e.Param != "rateLimitOverrides" {
				t.Errorf("MergeOverrides(%s, %s) err = %v, want %s", tt.stored, tt.patch, err, tt.code)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("MergeOverrides(%s, %s) = %s, %v; want %s", tt.stored, tt.patch, got, err, tt.want)
		}
	}
}
