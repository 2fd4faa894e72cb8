package events

// A session's background commands (stream bg-<sessionId>, docs/tools.md "Background
// commands"): each task started, and its one completion. The stream is its own aggregate so
// that a task ending while a turn runs (or after it ended) never races the turn's appends to
// the session stream, whose revision the running turn owns. The completion is the one receipt
// that bg output, bg wait and a later turn's bg list all report.
const (
	TypeBackgroundStarted   = "session.bg.started.1"
	TypeBackgroundCompleted = "session.bg.completed.1"
)

// BackgroundStarted is a background command running: recorded once its process started and
// before its task id is returned to the call that started it.
type BackgroundStarted struct {
	SessionID string `json:"sessionId"`
	TaskID    string `json:"taskId"`
	// CallID is the tool call that started the task.
	CallID  string `json:"callId,omitempty"`
	Command string `json:"command"`
	Dir     string `json:"dir"`
	// LogPath is the file holding the task's complete output, raw.
	LogPath string `json:"logPath"`
	// Holder is the process supervising the task (host, pid and a random part): the task
	// dies with it.
	Holder    string `json:"holder"`
	StartedAt string `json:"startedAt"`
}

func (BackgroundStarted) EventType() string { return TypeBackgroundStarted }

// Completion statuses of a background task.
const (
	// BackgroundExited: the command ended on its own (an exit code, or a signal Zuno did not
	// send).
	BackgroundExited = "exited"
	// BackgroundCancelled: bg action=cancel stopped it.
	BackgroundCancelled = "cancelled"
	// BackgroundKilled: Zuno stopped it without being asked (its supervising process shut
	// down).
	BackgroundKilled = "killed"
	// BackgroundLost: its supervising process ended without recording how the task ended
	// (killed, crashed): the task died with it, at a moment nobody observed. Recorded by a
	// later process that saw the holder gone.
	BackgroundLost = "lost"
	// BackgroundCapped: its output reached the disk cap (tool_output.max_artifact_bytes, or
	// what the session's cap had left; docs/config.md, "Bounds"), so Zuno stopped it and
	// dropped the rest: the log keeps the first TotalWritten bytes, OutputSHA256 their digest.
	BackgroundCapped = "capped"
)

// BackgroundCompleted is how a background task ended: its one completion receipt. A task
// has at most one; the first recorded stands.
type BackgroundCompleted struct {
	SessionID string `json:"sessionId"`
	TaskID    string `json:"taskId"`
	CallID    string `json:"callId,omitempty"`
	// Status is exited, cancelled, killed or lost.
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// GuardFailed: the command's guard failed; whether the command ran is unknown.
	GuardFailed bool `json:"guardFailed,omitempty"`
	// NeverStarted: the guard could not start the program; nothing ran.
	NeverStarted bool `json:"neverStarted,omitempty"`
	// OutputDetached: a process outside the group held the output open; capture stopped.
	OutputDetached bool `json:"outputDetached,omitempty"`
	// TotalWritten is the output's size in bytes and OutputSHA256 its digest (empty for a
	// lost task, whose output was never seen to its end).
	TotalWritten int64  `json:"totalWritten"`
	OutputSHA256 string `json:"outputSha256,omitempty"`
	LogPath      string `json:"logPath"`
	// Holder is the process that recorded the completion.
	Holder  string `json:"holder"`
	EndedAt string `json:"endedAt"`
}

func (BackgroundCompleted) EventType() string { return TypeBackgroundCompleted }
