package permission

// AllowAllStillEnforces is what allow_all does not lift (docs/permissions.md, "Modes").
var allowAllStillEnforces = []string{"explicit deny", "catastrophic shell denial", "sandbox authority", "argument validation"}

// Report is the resolved policy as zuno debug permissions prints it: the modes, every rule in
// evaluation order with its layer and source, the contract, and optionally one decision with
// the rule's action beside the action after the mode.
type Report struct {
	ConfiguredMode        Mode      `json:"configuredMode"`
	Mode                  Mode      `json:"mode"`
	ModeReason            string    `json:"modeReason,omitempty"`
	AllowAllStillEnforces []string  `json:"allowAllStillEnforces"`
	Rules                 []Rule    `json:"rules"`
	Contract              *Contract `json:"contract,omitempty"`
	Decision              *Decision `json:"decision,omitempty"`
	// Message is the decision's text when it does not simply allow.
	Message string `json:"message,omitempty"`
}

// Explain reports the policy and, when req is not nil, its decision for that call.
func Explain(p Policy, req *Request) Report {
	r := Report{ConfiguredMode: p.configured, Mode: p.mode, ModeReason: p.modeReason,
		AllowAllStillEnforces: append([]string(nil), allowAllStillEnforces...), Rules: p.Rules()}
	if p.contract != nil {
		c := p.contract.With()
		r.Contract = &c
	}
	if req != nil {
		d := p.Decide(*req)
		r.Decision, r.Message = &d, d.Message()
	}
	return r
}
