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
	// NameTaskContext keeps a long task's managed context (adapters/tools/contexttools).
	NameTaskContext = "task_context"
	// The Goal's tools (adapters/tools/goaltools, docs/goals.md). job and job_reconcile
	// are adapters/tools/delegate's.
	NameGoalGet          = "goal_get"
	NameGoalUpdate       = "goal_update"
	NameGoalRequestInput = "goal_request_input"
	NameJob              = "job"
	NameJobReconcile     = "job_reconcile"
	// NameSessionMessage is root-only peer context (seeds 000): never offered to a delegated
	// child (agent.ChildTools).
	NameSessionMessage = "session_message"
	// The user-mediated tools (docs/questions.md). question_async asks under the permission
	// key question (permission.KeyFor).
	NameQuestion      = "question"
	NameQuestionAsync = "question_async"
	NamePlanExit      = "plan_exit"
	// NameHistory and NameNotes are the continuity tools, offered only when continuity is
	// enabled (adapters/tools/continuity).
	NameHistory = "history"
	NameNotes   = "notes"
	// The web tools (adapters/tools/web, docs/web.md): webfetch is always in the catalogue,
	// web_search when a provider is configured.
	NameWebFetch  = "webfetch"
	NameWebSearch = "web_search"
)
