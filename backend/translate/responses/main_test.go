package responses

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// jsonEqual fails the test unless got and want are the same JSON value.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		var gi, wi bytes.Buffer
		_ = json.Indent(&gi, got, "", "  ")
		_ = json.Indent(&wi, []byte(want), "", "  ")
		t.Errorf("got  %s\nwant %s", gi.String(), wi.String())
	}
}
