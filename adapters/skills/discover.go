// Package skills discovers the skills of the configured directories (docs/skills.md): every
// <dir>/<name>/SKILL.md, parsed by domain/skills. A project directory is read from the
// checkout, which the agent's own shell may write, so no symbolic link is followed below the
// repository root there: a link cannot make a file outside the checkout a project skill.
package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	domskills "github.com/zuno-run/zuno/domain/skills"
)

// MaxPerDir bounds the skill directories one configured directory may hold: a checkout with a
// million entries under .zuno/skills must not make every turn read them.
const MaxPerDir = 512

// maxEntries bounds the names read from one configured directory.
const maxEntries = 4 * MaxPerDir

// MaxTotalBytes bounds the bytes one discovery keeps of all the skill files together: 512
// files of 256 KiB would otherwise hold 128 MiB in every turn's memory. 16 MiB is 500 times
// the largest selected-body budget.
const MaxTotalBytes = 16 << 20

// Dir is one configured skill directory and its scope.
type Dir struct {
	Path  string
	Scope string
	// Root, for a project directory, is the repository root: no component between it and a
	// SKILL.md may be a symbolic link.
	Root string
}

// Dirs are the skill directories of a workspace: the user's (<global config dir>/skills),
// the trusted layers' skills.paths (user scope), then the project's (<repository root>/.zuno/skills),
// in that order.
func Dirs(globalDir string, paths []string, projectRoot string) []Dir {
	var out []Dir
	if globalDir != "" {
		out = append(out, Dir{Path: filepath.Join(globalDir, "skills"), Scope: domskills.ScopeUser})
	}
	for _, p := range paths {
		out = append(out, Dir{Path: filepath.Clean(p), Scope: domskills.ScopeUser})
	}
	if projectRoot != "" {
		out = append(out, Dir{Path: filepath.Join(projectRoot, ".zuno", "skills"), Scope: domskills.ScopeProject, Root: projectRoot})
	}
	return out
}

// Discover reads every directory. A directory that does not exist holds no skill; a file
// that is not a skill is a Problem, not an error, so one broken skill does not stop the
// others (a required one still fails: Catalog.Find). Only an unreadable directory is an error.
func Discover(dirs []Dir) (domskills.Catalog, error) {
	var found []domskills.Skill
	var problems []domskills.Problem
	seen := map[string]bool{}
	left := MaxTotalBytes
	for _, d := range dirs {
		if seen[d.Path] {
			continue
		}
		seen[d.Path] = true
		s, p, err := discoverDir(d, &left)
		if err != nil {
			return domskills.Catalog{}, err
		}
		found, problems = append(found, s...), append(problems, p...)
	}
	return domskills.NewCatalog(found, problems), nil
}

func discoverDir(d Dir, left *int) ([]domskills.Skill, []domskills.Problem, error) {
	dir, err := openDir(d)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, []domskills.Problem{{Source: d.Path, Error: "a component below the repository root is a symbolic link: " +
			"a project's skill directory must be inside the checkout itself"}}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("skills: open %s: %w", d.Path, err)
	}
	defer dir.Close()
	// At most maxEntries names are read: a directory holding more is left out whole, so what
	// is discovered never depends on the order the file system lists a huge directory in.
	entries, err := dir.ReadDir(maxEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("skills: read %s: %w", d.Path, err)
	}
	if len(entries) > maxEntries {
		return nil, []domskills.Problem{{Source: d.Path, Error: fmt.Sprintf("holds more than %d entries: none of its skills are read", maxEntries)}}, nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var skills []domskills.Skill
	var problems []domskills.Problem
	n := 0
	for _, e := range entries {
		if !e.IsDir() && (d.Root != "" || e.Type()&fs.ModeSymlink == 0) {
			continue // a project's skill is a real directory; a user's may be a link to one
		}
		source := filepath.Join(d.Path, e.Name(), domskills.FileName)
		if n++; n > MaxPerDir {
			problems = append(problems, domskills.Problem{Source: source, Error: fmt.Sprintf("more than %d skills in %s: the rest are left out", MaxPerDir, d.Path)})
			break
		}
		data, err := readSkill(dir, e.Name(), d.Root == "")
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory without SKILL.md is not a skill
		}
		if err != nil {
			problems = append(problems, domskills.Problem{Source: source, Error: err.Error()})
			continue
		}
		if *left -= len(data); *left < 0 {
			problems = append(problems, domskills.Problem{Source: source, Error: fmt.Sprintf("the skill files read so far pass %d bytes in all: this one and the rest are left out", MaxTotalBytes)})
			break
		}
		s, err := domskills.Parse(data, e.Name(), d.Scope, source)
		if err != nil {
			problems = append(problems, domskills.Problem{Source: source, Error: err.Error()})
			continue
		}
		skills = append(skills, s)
	}
	return skills, problems, nil
}

// openDir opens a configured directory. A project's is reached from the repository root one
// component at a time, none followed if it is a link (O_NOFOLLOW on a handle, not a check by
// name), so a component swapped for a link after a check cannot redirect the read.
func openDir(d Dir) (*os.File, error) {
	if d.Root == "" {
		return os.Open(d.Path)
	}
	rel, err := filepath.Rel(d.Root, d.Path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("%s is not below %s", d.Path, d.Root)
	}
	fd, err := unix.Open(d.Root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Root, Err: err}
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOTDIR) {
			// Linux answers a link under O_DIRECTORY|O_NOFOLLOW with ENOTDIR: say which it was.
			var st unix.Stat_t
			if unix.Fstatat(fd, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: d.Path, Err: err}
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), d.Path), nil
}

// readSkill reads <dir>/<name>/SKILL.md from the directory's handle: a regular file, at most
// MaxFileBytes (one more is read to see that it is longer), opened without blocking (a FIFO
// planted there does not hang a turn) and, unless follow, through no symbolic link.
func readSkill(dir *os.File, name string, follow bool) ([]byte, error) {
	nofollow := unix.O_NOFOLLOW
	if follow {
		nofollow = 0
	}
	sub, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|nofollow, 0)
	if err != nil {
		return nil, linkError(err)
	}
	defer unix.Close(sub)
	fd, err := unix.Openat(sub, domskills.FileName, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|nofollow, 0)
	if err != nil {
		return nil, linkError(err)
	}
	f := os.NewFile(uintptr(fd), domskills.FileName)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("is not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, domskills.MaxFileBytes+1))
}

func linkError(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return errors.New("is reached through a symbolic link, which a project skill may not be")
	}
	if errors.Is(err, unix.ENOENT) {
		return fs.ErrNotExist
	}
	return err
}
