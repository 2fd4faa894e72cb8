package gitcheck

// Read is one repository read of the pre-flight: Display is how it is named to the model
// (the seeds' message names `git status --porcelain`), Args what actually runs.
type Read struct {
	Display string
	Args    []string
}

// PrefixRead asks where the directory sits in its repository; StatusRead what changed.
// --no-optional-locks: the pre-flight observes and never takes index.lock.
var (
	PrefixRead = Read{Display: "git rev-parse --show-prefix", Args: []string{"--no-optional-locks", "rev-parse", "--show-prefix"}}
	StatusRead = Read{Display: "git status --porcelain", Args: []string{"--no-optional-locks", "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all"}}
)

// Plan returns the directories (relative to the call's working directory, "" for it) whose
// repositories the pre-flight reads, each with PrefixRead then StatusRead, and which
// invocations belong to each. A command with no git add or commit (or only dry runs) needs
// no reads. It refuses a repository named by a -C the text cannot decide, and a command that
// would need more than MaxReads reads.
func Plan(invs []Invocation) (dirs []string, byDir map[string][]Invocation, refusal *Refusal) {
	byDir = map[string][]Invocation{}
	for _, inv := range invs {
		if inv.DryRun {
			continue
		}
		if inv.DirUnknown {
			return nil, nil, Unreadable("cannot tell which repository `git -C` names")
		}
		if _, seen := byDir[inv.Dir]; !seen {
			dirs = append(dirs, inv.Dir)
		}
		byDir[inv.Dir] = append(byDir[inv.Dir], inv)
	}
	if 2*len(dirs) > MaxReads {
		return nil, nil, Unreadable("reads at most 4 repository states and this command runs git add or commit in more than 2 directories")
	}
	return dirs, byDir, nil
}
