package turn

import (
	"crypto/sha256"
	"encoding/hex"
)

// PromptCacheKey is the key every provider request of a session asks a keyed prompt cache
// for (OpenAI's prompt_cache_key; docs/providers.md, "Prompt caching"): one per session, so
// its steps, which resend a growing prefix, reach the same cache. It is derived from the
// session id, so an auditor with the log can recompute it, and hashed, so the provider is not
// handed the id itself; 32 hex digits stay well inside the key lengths providers accept.
func PromptCacheKey(sessionID string) string {
	sum := sha256.Sum256([]byte("zuno.prompt-cache.v1\x00" + sessionID))
	return "zuno-" + hex.EncodeToString(sum[:16])
}
