//go:build unix

package datadir

import (
	"os"
	"syscall"
)

// fileOwner is the uid that owns the file fi describes.
func fileOwner(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// effectiveUID is the process's effective uid.
func effectiveUID() int { return os.Geteuid() }
