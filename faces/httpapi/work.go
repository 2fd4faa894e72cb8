package httpapi

import "net/http"

// The session's durable work state (docs/server.md, "Work state"): its plan and todos folded
// from its root's work stream, as plan_get and todo_get read them, and the jobs it delegated
// and the reports in its inbox, as zuno job list|show|inbox read them; its Goal as goal_get
// reads it (docs/goals.md).

// plan is GET /api/sessions/{sessionId}/plan: the focused plan (null when there is none).
func (s *Server) plan(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.Plan(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"plan": v})
}

// goal is GET /api/sessions/{sessionId}/goal: the Goal (null when the session never had one).
func (s *Server) goal(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.Goal(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"goal": v})
}

// todos is GET /api/sessions/{sessionId}/todos: the todo list and its revision.
func (s *Server) todos(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.Todos(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// jobs is GET /api/sessions/{sessionId}/jobs: the jobs the session delegated, in admission
// order.
func (s *Server) jobs(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.Jobs(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"jobs": v})
}

// job is GET /api/sessions/{sessionId}/jobs/{jobId}: one job of the session.
func (s *Server) job(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.SessionJob(ctx, r.PathValue("sessionId"), r.PathValue("jobId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// inbox is GET /api/sessions/{sessionId}/inbox: the job reports the session received,
// queued or consumed.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.Inbox(ctx, r.PathValue("sessionId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"inputs": v})
}
