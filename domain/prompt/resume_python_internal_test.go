package prompt

import (
	"bufio"
	"encoding/hex"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The Python checker (docs/verifier/receipts.py) encodes a SHA-256 state from the standard's
// compression function, Zuno from crypto/sha256's MarshalBinary (docs/formats/receipts.md §13).
// The two must agree at every length a prefix can have, the block boundaries above all: 55
// and 56 bytes (where SHA-256's own padding changes blocks, which a state must not include),
// 63, 64 and 65 (a pending block empty or full), and several blocks on. Each length from 0 to
// 300 with random bytes, and a few long ones.
func TestPythonStateEncodingAgrees(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not installed; CI must run the independent receipt checker")
		}
		t.Skip("SKIP: python3 is not installed; the independent receipt checker (docs/verifier) is not run")
	}
	rng := rand.New(rand.NewSource(3))
	var lengths []int
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 1000, 4095, 4096, 4097, 65535, 65536)
	var in strings.Builder
	var want []string
	for _, n := range lengths {
		b := make([]byte, n)
		rng.Read(b)
		in.WriteString(hex.EncodeToString(b) + "\n")
		want = append(want, sha256State(b))
	}
	const script = `import sys
sys.path.insert(0, "../../docs/verifier")
import receipts
for line in sys.stdin:
    print(receipts.sha256_state(bytes.fromhex(line.strip())))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python checker: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(want) {
			t.Fatalf("the Python checker printed more states than lengths")
		}
		if sc.Text() != want[i] {
			t.Errorf("a %d-byte prefix: Python %s, Go %s", lengths[i], sc.Text(), want[i])
		}
	}
	if i != len(want) {
		t.Fatalf("the Python checker printed %d states, want %d", i, len(want))
	}
}
