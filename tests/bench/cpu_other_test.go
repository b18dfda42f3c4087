//go:build !unix

package bench

import "time"

// processCPU is unknown on this platform: cpu-µs/op is not reported.
func processCPU() time.Duration { return 0 }
