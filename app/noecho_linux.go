package app

import (
	"os"

	"golang.org/x/sys/unix"
)

// noEcho turns a terminal's echo off while a passphrase is typed and returns
// what turns it back on (a no-op when f is not a terminal).
func noEcho(f *os.File) func() {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
