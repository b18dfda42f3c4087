package config

import (
	"bytes"
	"errors"
	"io"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func asType[T error](err error, target *T) bool { return errors.As(err, target) }
