// Package prompt assembles what a model is shown for one provider step, as a pure policy:
// ordered, attributed sections (agent role, collaboration mode, runtime policy, AGENTS.md
// files, durable work state), the conversation and the tool
// contracts, projected into a provider-neutral model.Request, with a receipt that proves the
// request byte for byte.
//
// The caller reads files, databases and configuration and hands over bytes; this package does
// no I/O and reads no clock, so the same inputs always give a byte-identical receipt and a
// recorded assembly can be re-run and compared.
package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/zuno-run/zuno/events"
)

// Lanes in their canonical order. A section's lane decides where it appears; not every lane
// is present in every prompt. Routing, the one lane still to come, is added with the input
// that fills it.
const (
	LaneAgentRole     = "agent_role"
	LaneMode          = "collaboration_mode"
	LaneRuntimePolicy = "runtime_policy"
	LaneGlobalAgents  = "global_agents"
	LaneProjectAgents = "project_agents"
	LaneWorkState     = "work_state"
	// LaneSelectedSkills, LaneSkillIndex and LaneMemory follow the durable work state
	// (seeds 002 §1; docs/skills.md, docs/memory.md).
	LaneSelectedSkills = "selected_skills"
	LaneSkillIndex     = "skill_index"
	LaneMemory         = "memory"
)

var laneOrder = []string{
	LaneAgentRole, LaneMode, LaneRuntimePolicy, LaneGlobalAgents, LaneProjectAgents, LaneWorkState,
	LaneSelectedSkills, LaneSkillIndex, LaneMemory,
}

func laneRank(lane string) (int, bool) {
	for i, l := range laneOrder {
		if l == lane {
			return i, true
		}
	}
	return 0, false
}

// Trust levels say who could have written a section's text, from most to least trusted. A
// reviewer reading a receipt needs to see, for instance, that an instruction came from a
// repository file that anyone with commit access could have planted.
const (
	// TrustHost: text zuno itself wrote (built-in agents, runtime sections, work state layout).
	TrustHost = "host"
	// TrustUser: the user's own configuration outside the workspace (global AGENTS.md,
	// user-defined agents and Skills).
	TrustUser = "user"
	// TrustProject: files inside the workspace (project AGENTS.md, project Skills).
	TrustProject = "project"
	// TrustSession: text produced during the run by models, tools or child agents.
	TrustSession = "session"
)

var trustRank = map[string]int{TrustHost: 4, TrustUser: 3, TrustProject: 2, TrustSession: 1}

// priority is a section's precedence when instructions conflict: higher wins. It follows
// trust, and within the project lane the nearer AGENTS.md wins (depth is added), which is
// the convention AGENTS.md files are written for. Sections of one lane appear in ascending
// priority, so the winning instruction is the one the model reads last.
func priority(trust string, refinement int) int {
	return trustRank[trust]*100 + min(refinement, 99)
}

// Section is one model-visible section: its receipt metadata and its content.
type Section struct {
	events.PromptSection
	Content string `json:"content"`
}

// Estimator names the token estimate below; it is recorded in every receipt.
const Estimator = "zuno.tokens.v1"

// MessageOverheadTokens is added per message to the whole-input estimate for the role
// markers and separators that providers wrap every message in (3-4 tokens on OpenAI's
// published accounting, similar elsewhere).
const MessageOverheadTokens = 4

// EstimateTokens is a cheap, tokenizer-free estimate: one token per four ASCII bytes (rounded
// up) plus one per non-ASCII character. Plain bytes/4 charges a three-byte CJK character
// three quarters of a token where real tokenizers spend one or more, so a Chinese AGENTS.md
// would be under-counted by a quarter or worse; counting such characters singly stays close
// for CJK and overestimates only accented Latin text slightly. A byte that is not valid UTF-8
// counts as one character. The provider stays the final judge: this estimate only has to be
// good enough to refuse a clearly over-long prompt before it is sent.
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		other++
		i += size
	}
	return (ascii+3)/4 + other
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func digestString(s string) string { return digest([]byte(s)) }

func validDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
