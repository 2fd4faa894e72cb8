package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	adconfig "github.com/zuno-run/zuno/adapters/config"
	"github.com/zuno-run/zuno/adapters/mcp"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/adapters/tools/web/search"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/bounds"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/events"
)

// config is the merged configuration of every layer (docs/config.md): the global
// zuno.json[c], the project's, the file --config names, ZUNO_* variables, flags and the
// managed policy, later layers winning key by key.
type config struct {
	// DB is the embedded SQLite file (events and read models): ZUNO_DB.
	DB string `json:"db"`
	// EventStoreURL selects another event store: postgres://… or esdb://…; ZUNO_EVENTSTORE_URL.
	EventStoreURL string `json:"eventstore_url"`
	// ReadModelURL puts the read models in Postgres: postgres://…; ZUNO_READMODEL_URL.
	ReadModelURL string `json:"readmodel_url"`
	// ReadModelReaderURL is the Postgres login `zuno db` runs as, a role that holds only SELECT
	// on the read models; unset, the reader role the migrations created (docs/storage.md);
	// ZUNO_READMODEL_READER_URL.
	ReadModelReaderURL string `json:"readmodel_reader_url"`
	// BusURL sends commands over a durable bus on Postgres (postgres://…) to `zuno worker`
	// processes, instead of handling them in process; ZUNO_BUS_URL.
	BusURL string `json:"bus_url"`

	// Model is what `zuno run` uses without --model: openai/<model>, anthropic/<model> or
	// scripted:<file>; ZUNO_MODEL.
	Model string `json:"model"`
	// ContextWindow is the model's input limit in tokens when the provider does not say (0:
	// unknown, the provider has the last word).
	ContextWindow int64 `json:"context_window"`
	MaxTokens     int   `json:"max_tokens"`
	// Provider configures providers by id: a family's base URL, key, headers, timeout and
	// retries, or a new id of a family (docs/config.md, "Providers").
	Provider map[string]provider.Settings `json:"provider"`
	// Agents configures agents by name (agents.build.steps).
	Agents map[string]agent.Override `json:"agents"`
	// Tools enables or disables tools by name; availability, not authorisation. The policies
	// also read each layer's tools through Layers.Raw("tools").
	Tools       map[string]bool   `json:"tools"`
	Concurrency concurrencyConfig `json:"concurrency"`
	// Continuity offers the history and notes tools when enabled (docs/tools.md).
	Continuity struct {
		Enabled bool `json:"enabled"`
	} `json:"continuity"`
	ToolOutput toolOutputConfig `json:"tool_output"`
	// Skills and Memory: docs/skills.md, docs/memory.md.
	Skills skillsConfig `json:"skills"`
	Memory memoryConfig `json:"memory"`
	// WebSearch configures web_search's provider (docs/web.md); only trusted layers may set it.
	WebSearch json.RawMessage `json:"web_search"`
	webSearch search.Provider

	// Permission and Sandbox are read layer by layer (Layers.Raw) by the permission
	// evaluator and the sandbox resolver: which layer said what is part of their meaning.
	Permission json.RawMessage `json:"permission"`
	Sandbox    json.RawMessage `json:"sandbox"`
	// Trust admits repositories whose project layer may name host commands (trust.go of
	// adapters/config reads it; only trusted layers may set it).
	Trust struct {
		ProjectHostCommands []string `json:"project_host_commands"`
	} `json:"trust"`
	// MCP is the MCP servers (docs/mcp.md); mcpRecord, when set, keeps their lifecycle in
	// memory (zuno debug agent).
	MCP       json.RawMessage `json:"mcp"`
	mcpRecord func(context.Context, events.MCPLifecycle) error

	// Host programs the specification configures and this build does not run yet: accepted,
	// and reported as notes.
	Shell        json.RawMessage `json:"shell"`
	LSP          json.RawMessage `json:"lsp"`
	Formatter    json.RawMessage `json:"formatter"`
	ProductAgent json.RawMessage `json:"productAgent"`

	// EnvExclude is shell.env.exclude of the trusted layers, united: host variables withheld
	// from shell and bg commands beyond the ZUNO_* namespace (docs/tools.md).
	EnvExclude []string `json:"-"`

	// SandboxConfig is the sandbox layers merged (domain/sandbox), validated at load.
	SandboxConfig sandbox.Config `json:"-"`

	// Layers is every layer as read, for Raw; Notes are settings accepted but not acted on.
	Layers *adconfig.Set `json:"-"`
	Notes  []string      `json:"-"`
}

type concurrencyConfig struct {
	ToolCalls      int `json:"tool_calls"`
	Delegations    int `json:"delegations"`
	MCPConnections int `json:"mcp_connections"`
	LSPRequests    int `json:"lsp_requests"`
}

// toolOutputConfig are the tool output limits (domain/bounds; docs/config.md, "Bounds"): after
// load, each is the value in effect, its default when unset and its ceiling when above it.
type toolOutputConfig struct {
	MaxBytes int `json:"max_bytes"`
	MaxLines int `json:"max_lines"`
	// MaxArtifactBytes bounds the disk one shell call (or background task) may fill with
	// withheld output; MaxSessionArtifactBytes what a session's calls may fill together.
	MaxArtifactBytes        int64 `json:"max_artifact_bytes"`
	MaxSessionArtifactBytes int64 `json:"max_session_artifact_bytes"`
}

// recorded is the limits as a turn records them.
func (o toolOutputConfig) recorded() *events.Bounds {
	return &events.Bounds{MaxBytes: o.MaxBytes, MaxLines: o.MaxLines, MaxArtifactBytes: o.MaxArtifactBytes,
		MaxSessionArtifactBytes: o.MaxSessionArtifactBytes}
}

// clamp puts every limit in effect: the default for unset, the ceiling for a value above it,
// each clamping said as a note (no layer lifts a ceiling, docs/config.md "Bounds").
func (o *toolOutputConfig) clamp() []string {
	var notes []string
	set := func(l bounds.Limit, v int64) int64 {
		e := l.Effective(v)
		if e != v && v != 0 {
			notes = append(notes, fmt.Sprintf("%s is %d %s, above its ceiling: %d is in effect", l.Key, v, l.Unit, e))
		}
		return e
	}
	o.MaxBytes = int(set(bounds.ToolOutputBytes, int64(o.MaxBytes)))
	o.MaxLines = int(set(bounds.ToolOutputLines, int64(o.MaxLines)))
	o.MaxArtifactBytes = set(bounds.ArtifactBytes, o.MaxArtifactBytes)
	o.MaxSessionArtifactBytes = set(bounds.SessionBytes, o.MaxSessionArtifactBytes)
	return notes
}

// settings are the keys the application layer acts on.
func (c config) settings() zapp.Settings {
	return zapp.Settings{Model: c.Model, ContextWindow: c.ContextWindow, MaxTokens: c.MaxTokens, Agents: c.Agents,
		Tools: c.Tools, ToolCalls: c.Concurrency.ToolCalls, Bounds: c.ToolOutput.recorded(), Delegations: c.Concurrency.Delegations, Permission: c.Raw("permission"), ToolSwitches: c.Raw("tools"),
		Home: homeDir(), FullAccess: c.SandboxConfig.Mode == "danger-full-access", Zuno: zunoData(c), Own: ownLocations(c)}
}

// zunoData is what the risk gate protects as Zuno's own: the data directory (auth file,
// artifacts, background output) and the event database with its WAL and shared memory, which
// ZUNO_DB may put elsewhere (docs/risk.md).
func zunoData(c config) []string {
	out := []string{dataDir(c)}
	if db, err := filepath.Abs(c.DB); err == nil && c.DB != "" {
		out = append(out, db, db+"-wal", db+"-shm")
	}
	return out
}

// homeDir is the user's home: $HOME, else the platform's answer (the passwd entry), so the
// risk gate and ~ in path rules keep protecting it when HOME is unset (docs/risk.md).
func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// gates applies the application's rules to the layers (commands/app, layers.go): the
// permission and sandbox layers checked, the sandbox merged, shell.env.exclude united.
func (c *config) gates() error {
	sb, err := zapp.CheckGates(c)
	if err != nil {
		return err
	}
	c.SandboxConfig = sb
	if err := c.providers(); err != nil {
		return err
	}
	c.EnvExclude, err = zapp.MergeEnvExclude(c, shell.ValidateExclude)
	if err == nil {
		c.webSearch, err = openWebSearch(c.WebSearch)
	}
	return err
}

// providers resolves every configured provider at load, so a bad entry is refused before any
// command runs, naming the key. Variables are read as the run will read them.
func (c *config) providers() error {
	for id := range c.Provider {
		if _, err := provider.Resolve(id, c.Provider, os.Getenv); err != nil {
			return &configError{err.Error()}
		}
	}
	return nil
}

// configFlag is the global --config flag; it wins over ZUNO_CONFIG.
var configFlag string

// cliSettings are the CLI layer: flags that set a configuration key append here before the
// configuration is loaded (e.g. --sandbox-backend → sandbox.backend).
var cliSettings []cliSetting

// cliSetting is one flag's configuration key and JSON value.
type cliSetting struct {
	Flag, Key string
	JSON      json.RawMessage
}

// configOptions are the process's answers to where each layer lives, the project layer found
// from the working directory.
func configOptions() adconfig.Options {
	cwd, _ := os.Getwd()
	return configOptionsIn(cwd)
}

// configOptionsIn are configOptions with the project layer found from dir: a turn's is its
// session's workspace, never the caller's working directory (docs/config.md, "Which files a
// turn read").
func configOptionsIn(dir string) adconfig.Options {
	o := adconfig.Options{Cwd: dir, GlobalDir: adconfig.GlobalDir(os.Getenv), ManagedDir: adconfig.DefaultManagedDir,
		Explicit: configFlag, ExplicitFrom: "--config"}
	if o.Explicit == "" {
		o.Explicit, o.ExplicitFrom, o.ExplicitOptional = os.Getenv("ZUNO_CONFIG"), "ZUNO_CONFIG", true
		if emptyFile(o.Explicit) {
			o.Explicit = "" // the sandbox's cover of a missing ZUNO_CONFIG: no layer, as before it (noted in loadConfig)
		}
	}
	for _, s := range cliSettings {
		o.AddCLI(s.Flag, s.Key, s.JSON)
	}
	return o
}

// emptyFile reports whether p is an empty regular file.
func emptyFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// defaultDB is zuno.db in the data directory: zuno under $XDG_DATA_HOME, else ~/.local/share.
func defaultDB() string {
	base := xdgDataHome()
	if base == "" {
		return "zuno.db"
	}
	return filepath.Join(base, "zuno", "zuno.db")
}

// xdgDataHome is $XDG_DATA_HOME, else ~/.local/share; empty when there is no home.
func xdgDataHome() string {
	if base := os.Getenv("XDG_DATA_HOME"); base != "" {
		return base
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "share")
}

// configError is a bad value of a host setting (where the log lives, the bus): it says what
// to do. The application's own settings are refused with app.ConfigError, the same code.
type configError struct{ msg string }

func (e *configError) Error() string { return "config: " + e.msg }
func (e *configError) Code() string  { return zapp.CodeBadConfig }

// loadConfig loads the process's configuration (the project layer of the working directory)
// and says the loader's warnings (the legacy config.json) and notes on stderr. A command loads
// it once.
func loadConfig() (config, error) {
	c, err := loadConfigFrom(configOptions())
	if err != nil && readOnlyCommand {
		c, err = withoutProject(c, err)
	}
	if c.Layers != nil {
		for _, w := range c.Layers.Warnings {
			fmt.Fprintln(os.Stderr, "zuno: warning: "+w)
		}
	}
	if err == nil {
		for _, n := range c.Notes {
			fmt.Fprintln(os.Stderr, "zuno: note: "+n)
		}
	}
	return c, err
}

// readOnlyCommand is set, before the command runs, for a command that only reads (annotated
// readOnly: session list and show, db, events read, debug): a project file that does not load
// does not block it (withoutProject).
var readOnlyCommand bool

// annotationReadOnly marks a command (and every command under it) as only reading.
const annotationReadOnly = "zuno.readOnly"

// readOnly marks cmd as a command that only reads (readOnlyCommand).
func readOnly(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annotationReadOnly] = "true"
	return cmd
}

// isReadOnly reports whether cmd or a command above it is marked readOnly.
func isReadOnly(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[annotationReadOnly] == "true" {
			return true
		}
	}
	return false
}

// withoutProject is a read-only command's answer to a configuration that does not load: when
// the project layer is what fails (the configuration loads without it), the command warns and
// goes on without that layer, since it acts on nothing the project file could govern; the
// project's settings are not applied, and every command that acts still refuses the file
// (docs/config.md, "Errors"). Any other failure stands.
func withoutProject(_ config, cause error) (config, error) {
	o := configOptions()
	o.SkipProject = true
	c, err := loadConfigFrom(o)
	if err != nil {
		return c, cause
	}
	fmt.Fprintf(os.Stderr, "zuno: warning: %v; this command only reads, so it goes on without the project's configuration (commands that act refuse it until it is fixed)\n", cause)
	return c, nil
}

// loadConfigFrom loads, merges and checks the layers o finds, saying nothing.
func loadConfigFrom(o adconfig.Options) (config, error) {
	var c config
	set, err := adconfig.Load(o)
	if err != nil {
		return c, err
	}
	c.Layers = set
	if err := set.Decode(&c); err != nil {
		return c, err
	}
	c.notes()
	if c.DB == "" {
		c.DB = defaultDB()
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	c.Notes = append(c.Notes, c.ToolOutput.clamp()...)
	if err := c.gates(); err != nil {
		return c, err
	}
	// A team on one Postgres keeps its read models there too, unless told otherwise.
	if c.ReadModelURL == "" && isPostgres(c.EventStoreURL) {
		c.ReadModelURL = c.EventStoreURL
	}
	return c, nil
}

func (c config) validate() error {
	if err := zapp.CheckLimits(zapp.Limits{Concurrency: []zapp.Setting{{Key: "tool_calls", Value: c.Concurrency.ToolCalls},
		{Key: "delegations", Value: c.Concurrency.Delegations}, {Key: "mcp_connections", Value: c.Concurrency.MCPConnections},
		{Key: "lsp_requests", Value: c.Concurrency.LSPRequests}},
		ToolOutputBytes: c.ToolOutput.MaxBytes, ToolOutputLines: c.ToolOutput.MaxLines}); err != nil {
		return err
	}
	if err := c.checkSkillsMemory(); err != nil {
		return err
	}
	if _, err := mcp.ParseServers(c.MCP); err != nil {
		return err
	}
	if c.ToolOutput.MaxArtifactBytes < 0 || c.ToolOutput.MaxSessionArtifactBytes < 0 {
		return &configError{"tool_output.max_artifact_bytes and max_session_artifact_bytes must be positive (0 or unset: the defaults, docs/config.md \"Bounds\")"}
	}
	if u := c.EventStoreURL; u != "" && !isPostgres(u) && !strings.HasPrefix(u, "esdb://") && !strings.HasPrefix(u, "esdb+discover://") {
		return &configError{fmt.Sprintf("ZUNO_EVENTSTORE_URL %q: want postgres://… or esdb://…, or unset it for the embedded SQLite store", u)}
	}
	if u := c.ReadModelURL; u != "" && !isPostgres(u) {
		return &configError{fmt.Sprintf("ZUNO_READMODEL_URL %q: want postgres://…, or unset it to keep read models in SQLite", u)}
	}
	if u := c.ReadModelReaderURL; u != "" && !isPostgres(u) {
		return &configError{fmt.Sprintf("ZUNO_READMODEL_READER_URL %q: want postgres://… of a role that holds only SELECT on the read models, or unset it to use the reader the migrations created", u)}
	}
	if u := c.BusURL; u != "" && !isPostgres(u) {
		return &configError{fmt.Sprintf("ZUNO_BUS_URL %q: want postgres://…, or unset it to handle commands in process", u)}
	}
	return nil
}

// notes takes the entries this build cannot act on out of the way and says so (commands/app,
// layers.go), with the host's own: a ZUNO_CONFIG naming no file.
func (c *config) notes() {
	c.Notes = append(c.Notes, zapp.DropUnbuiltTools(c.Tools)...)
	c.Notes = append(c.Notes, dropUnconfiguredWebSearch(c.Tools, c.WebSearch)...)
	c.Notes = append(c.Notes, zapp.UnusedNotes(c.Shell, map[string]json.RawMessage{"lsp": c.LSP,
		"formatter": c.Formatter, "productAgent": c.ProductAgent})...)
	if configFlag == "" && os.Getenv("ZUNO_CONFIG") != "" {
		if _, err := os.Stat(os.Getenv("ZUNO_CONFIG")); errors.Is(err, fs.ErrNotExist) {
			// Optional, so a shell profile may point at a file not written yet, but never silent.
			c.Notes = append(c.Notes, fmt.Sprintf("ZUNO_CONFIG names %s, which does not exist, so no file is read from it: create the file or unset ZUNO_CONFIG", os.Getenv("ZUNO_CONFIG")))
		} else if emptyFile(os.Getenv("ZUNO_CONFIG")) {
			c.Notes = append(c.Notes, fmt.Sprintf("ZUNO_CONFIG names %s, which is empty (the sandbox leaves an empty file where a missing one lies in a workspace), so no file is read from it: write the file or unset ZUNO_CONFIG", os.Getenv("ZUNO_CONFIG")))
		}
	}
	slices.Sort(c.Notes)
}

// Raw is each layer's value of a top-level key (permission, tools, sandbox), in layer order.
func (c config) Raw(key string) []settings.Raw {
	if c.Layers == nil {
		return nil
	}
	return c.Layers.Raw(key)
}

func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// ownLocations are Zuno's own files for this configuration, resolved as the tools resolve
// paths (absolute, symbolic links followed as far as the path exists): the shell's sandbox
// hides or protects them and the file tools refuse them (docs/sandbox.md, "Protected by
// default"), and a turn refuses a workspace that holds them.
func ownLocations(cfg config) sandbox.Locations {
	own := sandbox.Locations{DataDir: filepath.ToSlash(resolvedPath(dataDir(cfg)))}
	if usesSQLiteFile(cfg) {
		own.DB = filepath.ToSlash(resolvedPath(cfg.DB))
	}
	explicit := configFlag
	if explicit == "" {
		explicit = os.Getenv("ZUNO_CONFIG")
	}
	for _, c := range []string{adconfig.GlobalDir(os.Getenv), adconfig.DefaultManagedDir} {
		if c != "" {
			own.Config = append(own.Config, filepath.ToSlash(resolvedPath(c)))
		}
	}
	if explicit != "" {
		// A file: where it does not exist yet the sandbox covers it with an empty one
		// (docs/sandbox.md, "A trusted layer that does not exist yet").
		own.ConfigFiles = append(own.ConfigFiles, filepath.ToSlash(resolvedPath(explicit)))
	}
	return own
}

// ownLocationsFor is ownLocations for a session working in workspace: with the repository
// the workspace lies in, when its root is above the workspace (git there reads that .git).
func ownLocationsFor(cfg config, workspace string) sandbox.Locations {
	own := ownLocations(cfg)
	if root := adconfig.ProjectRoot(workspace); root != "" && resolvedPath(root) != resolvedPath(workspace) {
		own.Repository = filepath.ToSlash(resolvedPath(root))
	}
	return own
}

// usesSQLiteFile reports whether the event store or the read models live in cfg.DB.
func usesSQLiteFile(cfg config) bool {
	return cfg.DB != "" && (cfg.EventStoreURL == "" || cfg.ReadModelURL == "")
}

// resolvedPath is p absolute with the symbolic links of its longest existing part resolved,
// the rest kept as spelled: where the file is, or will be.
func resolvedPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for cur := abs; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		up := filepath.Dir(cur)
		if up == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = up
	}
}
