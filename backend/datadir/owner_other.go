//go:build !unix

package datadir

import "os"

// fileOwner has no uid to report on this platform (Windows ACLs are not
// owner uids): the ownership check is skipped there.
func fileOwner(os.FileInfo) (uid int, ok bool) { return 0, false }

// effectiveUID is -1: there is no uid to compare.
func effectiveUID() int { return -1 }
