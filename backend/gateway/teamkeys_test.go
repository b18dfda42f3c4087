package gateway

import (
	"testing"

	"omniroute/backend/store"
)

// TestTeamKeysNameTheirConnection: the shared limits' names the gateway
// gives are the ones store.SlotOwner reads back to their connection, so a
// connection's deletion and the team server's sweep find all of them.
func TestTeamKeysNameTheirConnection(t *testing.T) {
	const id = "c0ffee"
	for _, name := range []string{id, TeamQueueKey(id), TeamModelKey(id, "gpt-4o"), TeamModelKey(id, "org/model|odd")} {
		if got := store.SlotOwner(name); got != id {
			t.Errorf("SlotOwner(%q) = %q, want %q", name, got, id)
		}
	}
}
