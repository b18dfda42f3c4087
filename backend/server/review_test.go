package server_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"omniroute/tests/fakeupstream"
)

// TestSameFormatBadAnswersFailOver: a 2xx body that is cut short or is an error
// object in disguise is not a success: the next connection serves.
func TestSameFormatBadAnswersFailOver(t *testing.T) {
	for _, f := range []fakeupstream.Fault{
		{Mode: fakeupstream.ModeCutAfterEvents, AfterChunks: 1},
		{Mode: fakeupstream.ModeErrorEvent},
	} {
		t.Run(string(f.Mode), func(t *testing.T) {
			e := newEnv(t)
			e.addConn("a", "key-a", 1)
			second := e.addConn("b", "key-b", 2)
			e.up.SetFault("key-a", f)
			resp, body := e.chat("openai-compatible/gpt-4o-mini", false, nil)
			if resp.StatusCode != 200 || resp.Header.Get("X-OmniRoute-Selected-Connection-Id") != second {
				t.Fatalf("%d served by %s: %s", resp.StatusCode, resp.Header.Get("X-OmniRoute-Selected-Connection-Id"), body)
			}
		})
	}
}

func TestKeyWithoutInferenceScopeIsRefused(t *testing.T) {
	e := newEnv(t)
	e.addConn("a", "key-a", 1)
	code, m := e.mgmt("POST", "/api/keys", map[string]any{"name": "lease only", "scopes": []string{"lease:exclusive"}})
	if code != 201 {
		t.Fatalf("key: %d %v", code, m)
	}
	resp, body := e.chat("openai-compatible/gpt-4o-mini", false, map[string]string{"Authorization": "Bearer " + m["key"].(string)})
	if resp.StatusCode != 403 || errorCode(body) != "SCOPE_REQUIRED" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// TestTransportFailureOnOnlyTargetNamesTheFailure: a reset on a one-target
// combo answers with the upstream failure, not a cooldown it caused itself.
func TestTransportFailureOnOnlyTargetNamesTheFailure(t *testing.T) {
	e := newEnv(t)
	e.patchResilience(map[string]any{"comboCooldownWait": map[string]any{"enabled": false}})
	e.addEndpoint("a", "key-a")
	e.addCombo("solo", "priority", target("a/m"))
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeResetBeforeHeaders})
	resp, body := e.chat("solo", false, nil)
	if resp.StatusCode != http.StatusBadGateway || errorCode(body) != "ALL_ATTEMPTS_FAILED" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// TestMaxConcurrentSerialisesAnAccount: requests beyond a connection's
// max_concurrent wait for a slot instead of flooding the account.
func TestMaxConcurrentSerialisesAnAccount(t *testing.T) {
	e := newEnv(t)
	code, m := e.mgmt("POST", "/api/providers", map[string]any{"provider": "openai-compatible", "name": "glm", "apiKey": "key-a",
		"baseUrl": e.upURL, "models": []string{"gpt-4o-mini"}, "maxConcurrent": 1, "verify": false})
	if code != 201 {
		t.Fatalf("create: %d %v", code, m)
	}
	e.up.SetFault("key-a", fakeupstream.Fault{Mode: fakeupstream.ModeLatency, LatencyMs: 150})
	var wg sync.WaitGroup
	codes := make(chan int, 3)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := e.chat("openai-compatible/gpt-4o-mini", false, nil)
			codes <- resp.StatusCode
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	maxSeen := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n := e.up.InFlight(); n > maxSeen {
				maxSeen = n
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	wg.Wait()
	cancel()
	<-done
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Fatalf("status %d", c)
		}
	}
	if maxSeen > 1 || e.up.Hits("key-a") != 3 {
		t.Fatalf("upstream saw %d concurrent requests (max_concurrent 1), %d hits", maxSeen, e.up.Hits("key-a"))
	}
}
