//go:build !unix && !windows

package datadir

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("lock held by another process")

// tryLock has no OS lock to take on this platform (wasm, plan9): the
// directory is not protected against a second instance there.
func tryLock(*os.File) error { return nil }

func unlock(*os.File) {}
