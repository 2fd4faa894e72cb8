package tools

// RestoreChecker is a Restorer whose restored state can refuse the turn: the driver asks it
// once the session's earlier results are restored, before anything of the turn is recorded
// or sent (the skill tool: bodies loaded earlier in the session over today's budget, seeds
// 002 §5, docs/skills.md).
type RestoreChecker interface {
	Restorer
	CheckRestored() error
}
