//go:build !race

package gateway

import (
	"testing"
	"time"

	"omniroute/backend/capture"
	"omniroute/backend/clock"
	"omniroute/backend/store"
	"omniroute/backend/translate"
)

// offStore is a capture store holding no settings (capture off).
type offStore struct{}

func (offStore) GetValue(string, string) (string, bool, error) { return "", false, nil }
func (offStore) SetValue(string, string, string) error         { return nil }
func (offStore) SaveRequestBodies(*store.RequestBodies) error  { return nil }
func (offStore) RequestBodies(string) (store.RequestBodies, error) {
	return store.RequestBodies{}, store.ErrNotFound
}
func (offStore) DeleteRequestBodiesBefore(int64) error { return nil }
func (offStore) PruneRequestBodies(int64) error        { return nil }

// TestCaptureOffAllocatesNothing: with body capture off, asking whether a
// request is captured costs no allocation and leaves the writer as it is.
func TestCaptureOffAllocatesNothing(t *testing.T) {
	svc, err := capture.New(clock.NewFake(time.Unix(1, 0)), offStore{})
	if err != nil {
		t.Fatal(err)
	}
	g := benchGateway()
	g.capture = svc
	req := &request{format: translate.Chat, model: "m", body: chatBody, client: Client{KeyID: "k1"}}
	if n := testing.AllocsPerRun(100, func() {
		if g.beginCapture(req) || req.cap != nil {
			t.Fatal("captured while off")
		}
	}); n != 0 {
		t.Fatalf("capture off: %v allocations per request, want 0", n)
	}
}
