//go:build !linux

package app

import "os"

// noEcho cannot turn echo off on this system: the passphrase shows as it is
// typed (set OMNIROUTE_BACKUP_PASSPHRASE to avoid that).
func noEcho(*os.File) func() { return func() {} }
