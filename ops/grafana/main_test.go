package grafana_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// zunoBin is the zuno binary the deployment runs, built once by TestMain: the servers are
// separate processes, as in production.
var zunoBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zuno-grafana-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zunoBin = filepath.Join(dir, "zuno")
	out, err := exec.Command("go", "build", "-o", zunoBin, "github.com/zuno-run/zuno/cmd/zuno").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
