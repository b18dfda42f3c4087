//go:build linux

package hostile

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"omniroute/tests/testproc"
)

// binPath is the gateway binary built once by TestMain.
var binPath string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "omniroute-hostile-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile: temp dir:", err)
		os.Exit(1)
	}
	code := 1
	if binPath, err = testproc.BuildGateway(dir); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
