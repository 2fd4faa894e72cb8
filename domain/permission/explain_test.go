package permission_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

// TestExplain: the report of zuno debug permissions, as JSON.
func TestExplain(t *testing.T) {
	p, err := permission.Resolve(list(at(settings.Global, seedRules)), nil)
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithMode(permission.AllowAll, "sandbox danger-full-access")
	req := shell("make")
	b, err := json.Marshal(permission.Explain(p, &req))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ConfiguredMode        string   `json:"configuredMode"`
		Mode                  string   `json:"mode"`
		ModeReason            string   `json:"modeReason"`
		AllowAllStillEnforces []string `json:"allowAllStillEnforces"`
		Rules                 []struct {
			Permission, Pattern, Action, Layer, Source, Setting string
		} `json:"rules"`
		Decision struct {
			Permission string `json:"permission"`
			RuleAction string `json:"ruleAction"`
			Action     string `json:"action"`
			Rule       struct{ Pattern, Layer string }
		} `json:"decision"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.ConfiguredMode != "standard" || got.Mode != "allow_all" || got.ModeReason != "sandbox danger-full-access" {
		t.Fatalf("modes: %s", b)
	}
	if strings.Join(got.AllowAllStillEnforces, ",") != "explicit deny,catastrophic shell denial,sandbox authority,argument validation" {
		t.Fatalf("allowAllStillEnforces: %v", got.AllowAllStillEnforces)
	}
	var order []string
	for _, r := range got.Rules {
		order = append(order, r.Layer+":"+r.Permission+":"+r.Pattern+"="+r.Action)
	}
	want := "builtin:*:*=allow builtin:external_directory:*=ask global:read:*=allow global:edit:*=ask " +
		"global:shell:*=ask global:shell:git *=allow global:shell:git push*=deny global:shell:rm -rf*=deny"
	if strings.Join(order, " ") != want {
		t.Fatalf("rules in order:\n%s\nwant\n%s", strings.Join(order, " "), want)
	}
	if d := got.Decision; d.Permission != "shell" || d.RuleAction != "ask" || d.Action != "allow" || d.Rule.Pattern != "*" || d.Rule.Layer != "global" {
		t.Fatalf("decision: %s", b)
	}
	if r := permission.Explain(p, nil); r.Decision != nil {
		t.Fatal("no request, no decision")
	}
}
