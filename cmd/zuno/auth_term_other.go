//go:build !linux

package main

import (
	"errors"
	"os"
)

// noEcho is not built for this platform: pipe the key in (zuno auth set openai < keyfile).
func noEcho(*os.File) (func(), error) {
	return nil, errors.New("no terminal echo control on this platform")
}
