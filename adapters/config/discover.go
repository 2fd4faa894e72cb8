package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zuno-run/zuno/domain/settings"
)

// DefaultManagedDir holds the managed policy (managed.json or managed.jsonc) in production.
const DefaultManagedDir = "/etc/zuno"

// Location is one place a layer may be read from, for zuno debug paths.
type Location struct {
	Layer  settings.Layer `json:"layer"`
	Path   string         `json:"path"`
	Exists bool           `json:"exists"`
	// InEffect: the file is read (it exists, and no other file of its place shadows it).
	InEffect bool `json:"inEffect"`
	// Legacy marks config.json, read for one more release when it is the only global file.
	Legacy bool `json:"legacy,omitempty"`
}

// Paths is where every file layer is looked for.
type Paths struct {
	// GlobalDir is $XDG_CONFIG_HOME/zuno, else ~/.config/zuno.
	GlobalDir string `json:"globalDir"`
	// ProjectRoot is the nearest ancestor of the working directory holding .git; "" outside
	// a repository, and then there is no project layer.
	ProjectRoot string     `json:"projectRoot"`
	ManagedDir  string     `json:"managedDir"`
	Locations   []Location `json:"locations"`
}

// file is a layer file to read, in layer order.
type file struct {
	layer  settings.Layer
	path   string
	legacy bool
}

// GlobalDir is the global configuration directory: $XDG_CONFIG_HOME/zuno, else
// $HOME/.config/zuno ("" when neither is set).
func GlobalDir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "zuno")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "zuno")
	}
	return ""
}

// ProjectRoot is the nearest ancestor of dir (dir included) holding .git, a directory or a
// worktree's file; "" when there is none. An empty .git directory below another repository
// is passed over, as git passes over it: it is what the shell's sandbox leaves where a
// workspace inside a repository had no .git (docs/sandbox.md, "Covered when missing"), and
// the enclosing repository stays the project root.
func ProjectRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if up := filepath.Dir(d); !emptyDir(filepath.Join(d, ".git")) || up == d {
				return d
			} else if root := ProjectRoot(up); root != "" {
				return root
			}
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// emptyDir reports whether p is a directory with nothing in it.
func emptyDir(p string) bool {
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) == 0
}

// discover finds every layer file the options name, in layer order, and what exists.
func discover(o *Options) (Paths, []file, error) {
	p := Paths{GlobalDir: o.GlobalDir, ProjectRoot: ProjectRoot(o.Cwd), ManagedDir: o.ManagedDir}
	var files []file
	add := func(layer settings.Layer, dir, base string) error {
		if dir == "" {
			return nil
		}
		locs, f, err := pickOne(layer, dir, base)
		p.Locations = append(p.Locations, locs...)
		if f != "" {
			files = append(files, file{layer: layer, path: f})
		}
		return err
	}
	if err := add(settings.Global, o.GlobalDir, "zuno"); err != nil {
		return p, nil, err
	}
	if o.GlobalDir != "" {
		legacy := Location{Layer: settings.Global, Path: filepath.Join(o.GlobalDir, "config.json"), Legacy: true}
		legacy.Exists = exists(legacy.Path)
		legacy.InEffect = legacy.Exists && (len(files) == 0 || files[0].layer != settings.Global)
		p.Locations = append(p.Locations, legacy)
		if legacy.InEffect {
			files = append(files, file{layer: settings.Global, path: legacy.Path, legacy: true})
		}
	}
	if p.ProjectRoot != "" && !o.SkipProject {
		// The root file first, then .zuno/: the more specific directory wins (docs/config.md).
		if err := add(settings.Project, p.ProjectRoot, "zuno"); err != nil {
			return p, nil, err
		}
		if err := add(settings.Project, filepath.Join(p.ProjectRoot, ".zuno"), "zuno"); err != nil {
			return p, nil, err
		}
	}
	if o.Explicit != "" {
		loc := Location{Layer: settings.Explicit, Path: o.Explicit, Exists: exists(o.Explicit)}
		loc.InEffect = loc.Exists
		p.Locations = append(p.Locations, loc)
		switch {
		case !loc.Exists && o.ExplicitOptional:
		case !loc.Exists:
			return p, nil, &Error{code: CodeNotFound, Source: o.ExplicitFrom,
				Message: fmt.Sprintf("the configuration file %s does not exist", o.Explicit),
				Fix:     "create it, or name an existing file"}
		default:
			files = append(files, file{layer: settings.Explicit, path: o.Explicit})
		}
	}
	if err := add(settings.Managed, o.ManagedDir, "managed"); err != nil {
		return p, nil, err
	}
	return p, files, nil
}

// pickOne looks for base.json and base.jsonc in dir: one place, one file, so both at once is
// refused rather than one silently shadowing the other.
func pickOne(layer settings.Layer, dir, base string) ([]Location, string, error) {
	locs := []Location{{Layer: layer, Path: filepath.Join(dir, base+".json")}, {Layer: layer, Path: filepath.Join(dir, base+".jsonc")}}
	var found []string
	for i := range locs {
		if locs[i].Exists = exists(locs[i].Path); locs[i].Exists {
			found = append(found, locs[i].Path)
		}
	}
	switch len(found) {
	case 0:
		return locs, "", nil
	case 1:
		for i := range locs {
			locs[i].InEffect = locs[i].Exists
		}
		return locs, found[0], nil
	}
	return locs, "", &Error{code: CodeAmbiguous, Source: dir,
		Message: fmt.Sprintf("both %s and %s exist", found[0], found[1]),
		Fix:     "merge them into one and delete the other (both spellings accept comments)"}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
