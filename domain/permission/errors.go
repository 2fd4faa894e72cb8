package permission

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/settings"
)

// Stable error codes of the permission configuration. They reach the CLI's JSON output, so
// they never change meaning.
const (
	// CodeInvalidConfig: a permission or tools value is not the JSON it must be (not an object,
	// a key written twice, an empty key, an unknown setting, an unknown layer).
	CodeInvalidConfig = "invalid_permission_config"
	// CodeRejectedKey: a rule under a key no call is ever evaluated under (write, apply_patch,
	// and the three MCP resource tools); the message names the key to use instead.
	CodeRejectedKey = "rejected_permission_key"
	// CodeInvalidRuleAction: a rule's action is not allow, ask or deny.
	CodeInvalidRuleAction = "invalid_permission_action"
	// CodeInvalidMode: permission.mode is not standard, strict or allow_all.
	CodeInvalidMode = "invalid_permission_mode"
	// CodeToolsConflict: two tools switches of one layer fold onto one permission key with
	// opposite values.
	CodeToolsConflict = "tools_conflict"
)

// ConfigError is a refused permission or tools value, with the layer and source that wrote
// it. Err carries the stable code, the field at fault and the fix.
type ConfigError struct {
	Err    *domain.Error
	Layer  settings.Layer
	Source string
}

func (e *ConfigError) Error() string {
	where := string(e.Layer) + " layer"
	if e.Source != "" {
		where += ", " + e.Source
	}
	return fmt.Sprintf("%s (%s)", e.Err.Error(), where)
}

// Code returns the stable code (the domain.Coded interface).
func (e *ConfigError) Code() string { return e.Err.Code() }

// Unwrap gives errors.As and domain.HasCode the *domain.Error.
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(raw settings.Raw, code, field, message, fix string) *ConfigError {
	err := domain.NewError(code, message, fix)
	err.Field = field
	return &ConfigError{Err: err, Layer: raw.Layer, Source: raw.Source}
}

// rejectedKeys are the rule keys that no call is evaluated under, and the key that governs
// their tools. They used to be accepted and silently evaluated nothing (docs/permissions.md).
var rejectedKeys = map[string]string{
	"write":                       "edit",
	"apply_patch":                 "edit",
	"list_mcp_resources":          "read",
	"list_mcp_resource_templates": "read",
	"read_mcp_resource":           "read",
}

func rejectedKeyError(raw settings.Raw, key string) *ConfigError {
	use := rejectedKeys[key]
	governs := "write, edit and apply_patch"
	if use == "read" {
		governs = "read and the MCP resource tools (list_mcp_resources, list_mcp_resource_templates, read_mcp_resource)"
	}
	return configError(raw, CodeRejectedKey, "permission.rules."+key,
		fmt.Sprintf("permission.rules.%s: %q is not a permission key; the %s tool asks under permission %q", key, key, key, use),
		fmt.Sprintf("write the rule under permission.rules.%s, which governs %s", use, governs))
}
