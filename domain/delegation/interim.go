package delegation

// Interim versions of the contract rules, replaced by the deleg-tools branch when it lands.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

func Check(req Request, roster []string) error {
	if !slices.Contains(roster, req.Contract.Agent) {
		return domain.Invalid("agent", "is not a delegate", "use one of "+strings.Join(roster, ", "))
	}
	return nil
}

func LogicalKey(c events.DelegationContract) string {
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return "lk_" + hex.EncodeToString(sum[:16])
}

func Render(c events.DelegationContract) (string, string) {
	text := "# Objective\n\n" + c.Objective + "\n\n# Deliverable\n\n" + c.Deliverable + "\n\n# Instructions\n\n" + c.Instructions +
		"\n\n# Success evidence\n\n" + c.SuccessEvidence + "\n"
	sum := sha256.Sum256([]byte(text))
	return text, hex.EncodeToString(sum[:])
}
