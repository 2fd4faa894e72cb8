package tools

// Tool names, as the model calls them and as the tools config and agent allowlists spell
// them. Declared once here: the agents, the tool adapters and the catalogue all use these.
const (
	NameRead        = "read"
	NameGlob        = "glob"
	NameGrep        = "grep"
	NameWrite       = "write"
	NameApplyPatch  = "apply_patch"
	NameShell       = "shell"
	NameBg          = "bg"
	NameReportWrite = "report_write"
	NameTask        = "task"
	NamePlanGet     = "plan_get"
	NamePlanUpdate  = "plan_update"
	NameTodoGet     = "todo_get"
	NameTodoUpdate  = "todo_update"
	// Not built yet; named because prompt assembly already reacts to them.
	NameGoal         = "goal"
	NameJob          = "job"
	NameJobReconcile = "job_reconcile"
)
