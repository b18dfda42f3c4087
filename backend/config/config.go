// Package config reads the process configuration from the environment and
// holds the persisted, validated settings that the dashboard edits. Precedence
// is env (defaults) < persisted settings < per-connection overrides.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultPort is the gateway's well-known port.
const DefaultPort = 20128

// Process is the configuration fixed at start.
type Process struct {
	DataDir      string
	Host         string
	Port         int
	DatabaseURL  string
	AllowedHosts []string // extra Host header names accepted besides loopback
}

// Addr is host:port to listen on.
func (p Process) Addr() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.Port)) }

// BaseURL is the gateway's own URL as clients should use it.
func (p Process) BaseURL() string {
	h := p.Host
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(h, strconv.Itoa(p.Port))
}

// FromEnv reads OMNIROUTE_* variables; getenv is os.Getenv outside tests.
func FromEnv(getenv func(string) string) (Process, error) {
	p := Process{Host: "127.0.0.1", Port: DefaultPort}
	if v := getenv("OMNIROUTE_HOST"); v != "" {
		p.Host = v
	}
	if v := getenv("OMNIROUTE_PORT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 65535 {
			return p, fmt.Errorf("OMNIROUTE_PORT=%q is not a port number", v)
		}
		p.Port = n
	}
	p.DataDir = getenv("OMNIROUTE_DATA_DIR")
	if p.DataDir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			home, herr := os.UserHomeDir()
			if herr != nil {
				return p, fmt.Errorf("no data directory: set OMNIROUTE_DATA_DIR")
			}
			base = filepath.Join(home, ".config")
		}
		p.DataDir = filepath.Join(base, "omniroute")
	}
	p.DatabaseURL = getenv("OMNIROUTE_DATABASE_URL")
	for _, h := range strings.Split(getenv("OMNIROUTE_ALLOWED_HOSTS"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			p.AllowedHosts = append(p.AllowedHosts, strings.ToLower(h))
		}
	}
	return p, nil
}
