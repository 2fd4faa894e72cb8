package prompt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// Budget of runtime.work_state: at most this many items and bytes.
const (
	MaxWorkStateItems = 64
	MaxWorkStateBytes = 16 << 10
)

// textLimits are the per-field byte limits tried in turn before any item is omitted. The
// floor keeps about a line of every text: below it a title no longer says anything, and
// omitting whole items (with a count) is the more honest trade.
var textLimits = []int{0, 2048, 1024, 512, 256, 128, 64}

// Job statuses as the job store reports them.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobCompleted = "completed"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
	JobUncertain = "uncertain"
)

// Report statuses of a parent inbox input; only unconsumed reports are shown.
const (
	ReportQueued   = "queued"
	ReportSteering = "steering"
	ReportPromoted = "promoted"
	ReportConsumed = "consumed"
)

// WorkState is the durable work of the root session, read by the caller in one transaction
// so that every collection comes from the same point in time.
type WorkState struct {
	// PreviousReceiptID is the id of the prompt receipt of the previous provider step.
	PreviousReceiptID string
	PlanRevision      uint64
	// Plans is the plan stack, root first, as domain/work keeps it.
	Plans        []events.WorkPlan
	TodoRevision uint64
	Todos        []events.WorkItem
	// Jobs may hold every job of the session: only the active, uncertain, and terminal jobs
	// whose plan step is still open are shown.
	Jobs []Job
	// Reports may hold every report input: only unconsumed ones are shown.
	Reports []Report
	// Goal is the root session's Goal (docs/goals.md), nil when it never had one. It is
	// read with the Plan and the Todo items from the one work stream, so all three come
	// from the same revision.
	Goal *Goal
}

// Goal is the Goal as the work state shows it. Its identity, status, revision and criteria
// ids are never cut; the objective, criteria texts and question are free text.
type Goal struct {
	ID          string
	Revision    uint64
	Status      string
	Objective   string
	OwnerTurnID string
	Criteria    []events.GoalCriterion
	// Waiting is the open input request, nil when none.
	Waiting *events.GoalInputRequest
}

// Job is one agent job as the work state shows it.
type Job struct {
	ID             string
	Agent          string
	Status         string
	ReportDelivery string
	PlanStepID     string
	Objective      string
	FinalText      string
	Error          string
	// Reconciliation is the authority that settled a formerly uncertain job; like the
	// identity it is never truncated.
	Reconciliation string
}

// Report is a child's report waiting in the parent's inbox.
type Report struct {
	InputID   string
	JobID     string
	Agent     string
	Status    string
	FinalText string
}

func (ws *WorkState) empty() bool {
	return ws == nil || len(ws.Plans) == 0 && len(ws.Todos) == 0 && len(ws.Jobs) == 0 && len(ws.Reports) == 0 && ws.Goal == nil
}

// wsItem is one projected line of a collection.
type wsItem struct {
	terminal bool
	// pinned items are never omitted: they are the authoritative identities the work state
	// exists to carry.
	pinned  bool
	omitted bool
	plan    int // index into Plans, for steps
	render  func(limit int, truncated *int) string
	// memo is the line rendered at memoLimit and the fields it truncated: a budget search
	// renders the section again for every item it omits, each line at the same limit.
	memo          string
	memoLimit     int
	memoTruncated int
	memoized      bool
}

// line renders the item at limit, counting truncated fields into truncated, once per limit.
func (it *wsItem) line(limit int, truncated *int) string {
	if !it.memoized || it.memoLimit != limit {
		n := 0
		it.memo, it.memoLimit, it.memoTruncated, it.memoized = it.render(limit, &n), limit, n, true
	}
	*truncated += it.memoTruncated
	return it.memo
}

type wsRender struct {
	ws                     *WorkState
	steps, todos, jobs, rs []*wsItem
}

// RenderWorkState renders runtime.work_state within its budget: at most MaxWorkStateItems
// items per collection and MaxWorkStateBytes in all. Over budget it first truncates free text
// (titles, objectives, final texts, errors) UTF-8 safely, then omits items from the tail of
// each collection (Todo, then Plan step, then pending report, then Job; within a collection
// terminal items before open ones) and says how many were omitted. Identities, statuses,
// revisions and reconciliation fields are never cut. Uncertain jobs are never omitted; if
// they and the headers still do not fit, it fails closed with work_state_overflow rather than
// hide state the model must act on. An empty work state renders as "".
func RenderWorkState(ws *WorkState) (string, events.PromptWorkState, error) {
	if ws.empty() {
		return "", events.PromptWorkState{}, nil
	}
	r := &wsRender{ws: ws}
	r.collect()
	if len(ws.Plans) == 0 && len(r.todos) == 0 && len(r.jobs) == 0 && len(r.rs) == 0 && ws.Goal == nil {
		return "", events.PromptWorkState{}, nil
	}
	for _, items := range [][]*wsItem{r.todos, r.steps, r.rs, r.jobs} {
		for countShown(items) > MaxWorkStateItems {
			if !omitOne(items) {
				return "", events.PromptWorkState{}, overflowError(fmt.Sprintf(
					"%d uncertain jobs exceed the limit of %d per collection", countShown(items), MaxWorkStateItems))
			}
		}
	}
	for _, limit := range textLimits {
		if r.size(limit) <= MaxWorkStateBytes {
			text, truncated := r.render(limit)
			return text, r.report(text, limit, truncated), nil
		}
	}
	floor := textLimits[len(textLimits)-1]
	for _, items := range [][]*wsItem{r.todos, r.steps, r.rs, r.jobs} {
		for omitOne(items) {
			if r.size(floor) <= MaxWorkStateBytes {
				text, truncated := r.render(floor)
				return text, r.report(text, floor, truncated), nil
			}
		}
	}
	text, _ := r.render(floor)
	return "", events.PromptWorkState{}, overflowError(fmt.Sprintf(
		"with every omittable item omitted it is still %d bytes, over the budget of %d", len(text), MaxWorkStateBytes))
}

func overflowError(detail string) *domain.Error {
	return domain.NewError(CodeWorkStateOverflow, "runtime.work_state does not fit: "+detail,
		"settle or reconcile the uncertain jobs, or shorten the plan, job and report ids, then retry; nothing was sent")
}

func (r *wsRender) report(text string, limit, truncated int) events.PromptWorkState {
	rep := events.PromptWorkState{Bytes: len(text), TextLimit: limit, TruncatedFields: truncated}
	rep.Shown = events.PromptWorkStateCounts{
		PlanSteps: countShown(r.steps), Todos: countShown(r.todos), Jobs: countShown(r.jobs), Reports: countShown(r.rs),
	}
	rep.Omitted = events.PromptWorkStateCounts{
		PlanSteps: countOmitted(r.steps), Todos: countOmitted(r.todos), Jobs: countOmitted(r.jobs), Reports: countOmitted(r.rs),
	}
	return rep
}

func countShown(items []*wsItem) int {
	n := 0
	for _, it := range items {
		if !it.omitted {
			n++
		}
	}
	return n
}

func countOmitted(items []*wsItem) int { return len(items) - countShown(items) }

// omitOne omits the next victim: the last shown terminal item, else the last shown open one.
// Terminal items go first because what is finished matters less to the next step than what
// is not, while the tail is where the least established items of each kind sit.
func omitOne(items []*wsItem) bool {
	for _, wantTerminal := range []bool{true, false} {
		for i := len(items) - 1; i >= 0; i-- {
			it := items[i]
			if !it.omitted && !it.pinned && it.terminal == wantTerminal {
				it.omitted = true
				return true
			}
		}
	}
	return false
}

func (r *wsRender) collect() {
	ws := r.ws
	openSteps := map[string]bool{}
	for pi, p := range ws.Plans {
		for _, s := range p.Steps {
			if !work.Terminal(s.Status) {
				openSteps[s.ID] = true
			}
			r.steps = append(r.steps, &wsItem{terminal: work.Terminal(s.Status), plan: pi, render: func(limit int, n *int) string {
				return fmt.Sprintf("    %s [%s] %s", ident(s.ID), ident(s.Status), quote(s.Title, limit, n))
			}})
		}
	}
	for _, t := range ws.Todos {
		r.todos = append(r.todos, &wsItem{terminal: work.Terminal(t.Status), render: func(limit int, n *int) string {
			var b strings.Builder
			fmt.Fprintf(&b, "  %s [%s]", ident(t.ID), ident(t.Status))
			if t.Owner != "" {
				fmt.Fprintf(&b, " owner=%s", ident(t.Owner))
			}
			if t.PlanStepID != "" {
				fmt.Fprintf(&b, " step=%s", ident(t.PlanStepID))
			}
			if len(t.Dependencies) > 0 {
				deps := make([]string, len(t.Dependencies))
				for i, d := range t.Dependencies {
					deps[i] = ident(d)
				}
				fmt.Fprintf(&b, " after=%s", strings.Join(deps, ","))
			}
			b.WriteString(" ")
			b.WriteString(quote(t.Title, limit, n))
			return b.String()
		}})
	}
	for _, j := range ws.Jobs {
		active := j.Status == JobQueued || j.Status == JobRunning || j.Status == JobUncertain
		if !active && !(j.PlanStepID != "" && openSteps[j.PlanStepID]) {
			continue
		}
		r.jobs = append(r.jobs, &wsItem{terminal: !active, pinned: j.Status == JobUncertain, render: func(limit int, n *int) string {
			var b strings.Builder
			fmt.Fprintf(&b, "  %s [%s] agent=%s", ident(j.ID), ident(j.Status), ident(j.Agent))
			if j.ReportDelivery != "" {
				fmt.Fprintf(&b, " delivery=%s", ident(j.ReportDelivery))
			}
			if j.PlanStepID != "" {
				fmt.Fprintf(&b, " step=%s", ident(j.PlanStepID))
			}
			if j.Reconciliation != "" {
				fmt.Fprintf(&b, " reconciled_by=%s", quote(j.Reconciliation, 0, nil))
			}
			for _, f := range []struct{ key, val string }{{"objective", j.Objective}, {"final", j.FinalText}, {"error", j.Error}} {
				if f.val != "" {
					fmt.Fprintf(&b, " %s=%s", f.key, quote(f.val, limit, n))
				}
			}
			return b.String()
		}})
	}
	for _, rp := range ws.Reports {
		if rp.Status == ReportConsumed {
			continue
		}
		r.rs = append(r.rs, &wsItem{render: func(limit int, n *int) string {
			s := fmt.Sprintf("  %s job=%s [%s] agent=%s", ident(rp.InputID), ident(rp.JobID), ident(rp.Status), ident(rp.Agent))
			if rp.FinalText != "" {
				s += " final=" + quote(rp.FinalText, limit, n)
			}
			return s
		}})
	}
}

func (r *wsRender) render(limit int) (string, int) {
	var b strings.Builder
	truncated := r.write(limit, func(s string) { b.WriteString(s); b.WriteByte('\n') })
	return strings.TrimSuffix(b.String(), "\n"), truncated
}

// size is the length of render(limit)'s text, without building it: the budget search asks
// it once per omitted item, and the lines themselves are memoized.
func (r *wsRender) size(limit int) int {
	n := 0
	r.write(limit, func(s string) { n += len(s) + 1 })
	return max(n-1, 0)
}

// write hands each line of the section at limit to line and returns how many fields it
// truncated.
func (r *wsRender) write(limit int, line func(string)) int {
	ws := r.ws
	truncated := 0
	line("Durable work state at the start of this step, read from the store, which is the source of truth: " +
		"prefer it to anything earlier in the conversation, and change it only through the typed tools.")
	if ws.PreviousReceiptID != "" {
		line("Previous prompt receipt: " + ident(ws.PreviousReceiptID))
	}
	renderGoal(line, ws.Goal, limit, &truncated)
	if len(ws.Plans) > 0 {
		line(fmt.Sprintf("Plan revision %d:", ws.PlanRevision))
		for pi, p := range ws.Plans {
			head := fmt.Sprintf("  plan %s [%s]", ident(p.PlanID), ident(p.Status))
			if p.ParentPlanID != "" {
				head += " sub-plan of " + ident(p.ParentPlanID)
			}
			line(head + " " + quote(p.Title, limit, &truncated))
			for _, it := range r.steps {
				if it.plan == pi && !it.omitted {
					line(it.line(limit, &truncated))
				}
			}
		}
		omittedLine(line, countOmitted(r.steps), "plan step", "plan steps")
	}
	if len(r.todos) > 0 {
		line(fmt.Sprintf("Todo revision %d:", ws.TodoRevision))
		renderItems(line, r.todos, limit, &truncated)
		omittedLine(line, countOmitted(r.todos), "todo item", "todo items")
	}
	if len(r.jobs) > 0 {
		line("Jobs:")
		renderItems(line, r.jobs, limit, &truncated)
		omittedLine(line, countOmitted(r.jobs), "job", "jobs")
	}
	if len(r.rs) > 0 {
		line("Pending reports:")
		renderItems(line, r.rs, limit, &truncated)
		omittedLine(line, countOmitted(r.rs), "report", "reports")
	}
	for _, it := range r.jobs {
		if it.pinned {
			line("An uncertain job may have had side effects: never dispatch it again; settle it from an authoritative source first.")
			break
		}
	}
	return truncated
}

// renderGoal writes the Goal first: it is what the Plan and the Todo items serve.
func renderGoal(line func(string), g *Goal, limit int, truncated *int) {
	if g == nil {
		return
	}
	head := fmt.Sprintf("Goal revision %d: %s [%s]", g.Revision, ident(g.ID), ident(g.Status))
	if g.OwnerTurnID != "" {
		head += " owner=" + ident(g.OwnerTurnID)
	}
	line(head + " " + quote(g.Objective, limit, truncated))
	for _, c := range g.Criteria {
		s := "  criterion " + ident(c.ID)
		if c.NeedsEvidence {
			s += " needs_evidence"
		}
		if c.Evidence != "" {
			s += " evidence=" + ident(c.Evidence)
		}
		line(s + " " + quote(c.Text, limit, truncated))
	}
	if w := g.Waiting; w != nil {
		line(fmt.Sprintf("  waiting for input request %s (observed revision %d): %s", ident(w.RequestID), w.ObservedRevision,
			quote(w.Question, limit, truncated)))
	}
}

func renderItems(line func(string), items []*wsItem, limit int, truncated *int) {
	for _, it := range items {
		if !it.omitted {
			line(it.line(limit, truncated))
		}
	}
}

func omittedLine(line func(string), n int, one, many string) {
	switch {
	case n == 1:
		line("  (1 " + one + " omitted to fit the budget; read the store for the rest)")
	case n > 1:
		line(fmt.Sprintf("  (%d %s omitted to fit the budget; read the store for the rest)", n, many))
	}
}

// ident writes an identity or status as is when it is a plain token and quoted otherwise,
// so that no stored value can forge a line of its own.
func ident(s string) string {
	if s != "" && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '"' || r == '=' || r == '[' || r == ']'
	}) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// quote writes free text as a quoted string, cut to limit bytes (0: no limit) at a rune
// boundary. Quoting keeps multi-line final texts on one line, so the layout stays
// unambiguous whatever a model or child agent wrote.
func quote(s string, limit int, truncated *int) string {
	if limit > 0 && len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
		if truncated != nil {
			*truncated++
		}
	}
	return strconv.Quote(s)
}
