package events

// AllPayloads returns a zero value of every payload type, for NewRegistry. A payload type
// missing here cannot be read back from the log, so every new type is added here.
func AllPayloads() []Payload {
	return []Payload{
		SessionCreated{},
		SessionTitled{},
		UserMessageAppended{},
		DirectoryChanged{},
		SessionForked{},
		SessionPruned{},

		WorkPlanCreated{},
		WorkPlanPatched{},
		WorkPlanStepsAppended{},
		WorkPlanPushed{},
		WorkPlanPopped{},
		WorkPlanSuperseded{},
		WorkTodoUpdated{},
		WorkSnapshot{},
		GoalCreated{},
		GoalUpdated{},
		GoalInputRequested{},
		GoalInputAnswered{},
		GoalResumed{},
		GoalCompleted{},
		GoalProgressObserved{},

		TaskContextStarted{},
		TaskContextUpdated{},

		PromptAssembled{},
		TurnStarted{},
		ProviderRequest{},
		ToolBlocked{},
		ToolStarted{},
		ToolSettled{},
		VerificationReceipt{},
		TurnFinished{},
		TranscriptCompacted{},

		LogAnchored{},

		PermissionAsked{},
		PermissionAnswered{},
		PermissionClosed{},
		PermissionGranted{},
		PermissionRevoked{},

		JobAdmitted{},
		JobStarted{},
		JobSettled{},
		JobReportAdmitted{},
		JobReportConsumed{},
		JobReconciled{},
		InboxMessageAdmitted{},
		InboxMessageConsumed{},

		QuestionPublished{},
		QuestionAnswered{},
		QuestionDeferred{},
		QuestionVoided{},

		TurnLeased{},
		TurnLeaseReleased{},
		TurnInterruptRequested{},
		TurnSuspended{},
		TurnResumed{},

		BackgroundStarted{},
		BackgroundCompleted{},

		NoteWritten{},

		MemoryUpdated{},
		MemoryProposed{},
		MemoryRejected{},
		MCPLifecycle{},
	}
}
