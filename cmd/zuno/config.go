package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/agent"
)

// config says where Zuno keeps its state. Each key comes from the environment, else from the
// config file, else its default.
type config struct {
	// DB is the embedded SQLite file (events and read models): ZUNO_DB.
	DB string `json:"db"`
	// EventStoreURL selects another event store: postgres://… or esdb://…; ZUNO_EVENTSTORE_URL.
	EventStoreURL string `json:"eventstore_url"`
	// ReadModelURL puts the read models in Postgres: postgres://…; ZUNO_READMODEL_URL.
	ReadModelURL string `json:"readmodel_url"`
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
	// Agents configures agents by name (agents.build.steps).
	Agents map[string]agent.Override `json:"agents"`
	// Tools enables or disables tools by name; availability, not authorisation.
	Tools       map[string]bool   `json:"tools"`
	Concurrency concurrencyConfig `json:"concurrency"`
	ToolOutput  toolOutputConfig  `json:"tool_output"`
}

type concurrencyConfig struct {
	ToolCalls int `json:"tool_calls"`
}

type toolOutputConfig struct {
	MaxBytes int `json:"max_bytes"`
	MaxLines int `json:"max_lines"`
}

// settings are the keys the application layer acts on.
func (c config) settings() zapp.Settings {
	return zapp.Settings{Model: c.Model, ContextWindow: c.ContextWindow, MaxTokens: c.MaxTokens, Agents: c.Agents,
		Tools: c.Tools, ToolCalls: c.Concurrency.ToolCalls}
}

// configFile is $ZUNO_CONFIG, else zuno/config.json under the user's config directory.
func configFile() string {
	if p := os.Getenv("ZUNO_CONFIG"); p != "" {
		return p
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "zuno", "config.json")
}

// defaultDB is zuno/zuno.db under $XDG_DATA_HOME, else ~/.local/share.
func defaultDB() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "zuno.db"
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "zuno", "zuno.db")
}

// configError is a bad configuration: it names the file or variable and what to do.
type configError struct{ msg string }

func (e *configError) Error() string { return "config: " + e.msg }
func (e *configError) Code() string  { return "bad_config" }

func loadConfig() (config, error) {
	var c config
	if path := configFile(); path != "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return c, &configError{fmt.Sprintf("read %s: %v", path, err)}
		default:
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				return c, &configError{fmt.Sprintf("%s: %v (keys: db, eventstore_url, readmodel_url, bus_url, model, context_window, max_tokens, agents, tools, concurrency, tool_output)", path, err)}
			}
		}
	}
	for env, field := range map[string]*string{
		"ZUNO_DB": &c.DB, "ZUNO_EVENTSTORE_URL": &c.EventStoreURL, "ZUNO_READMODEL_URL": &c.ReadModelURL,
		"ZUNO_BUS_URL": &c.BusURL, "ZUNO_MODEL": &c.Model,
	} {
		if v := os.Getenv(env); v != "" {
			*field = v
		}
	}
	if c.DB == "" {
		c.DB = defaultDB()
	}
	if n := c.Concurrency.ToolCalls; n != 0 && (n < 1 || n > 64) {
		return c, &configError{fmt.Sprintf("concurrency.tool_calls is %d: use 1..64 (1 runs tool calls one at a time)", n)}
	}
	if c.ToolOutput.MaxBytes < 0 || c.ToolOutput.MaxLines < 0 {
		return c, &configError{"tool_output.max_bytes and max_lines must be positive (defaults 51200 and 2000)"}
	}
	if u := c.EventStoreURL; u != "" && !isPostgres(u) && !strings.HasPrefix(u, "esdb://") && !strings.HasPrefix(u, "esdb+discover://") {
		return c, &configError{fmt.Sprintf("ZUNO_EVENTSTORE_URL %q: want postgres://… or esdb://…, or unset it for the embedded SQLite store", u)}
	}
	if u := c.ReadModelURL; u != "" && !isPostgres(u) {
		return c, &configError{fmt.Sprintf("ZUNO_READMODEL_URL %q: want postgres://…, or unset it to keep read models in SQLite", u)}
	}
	if u := c.BusURL; u != "" && !isPostgres(u) {
		return c, &configError{fmt.Sprintf("ZUNO_BUS_URL %q: want postgres://…, or unset it to handle commands in process", u)}
	}
	// A team on one Postgres keeps its read models there too, unless told otherwise.
	if c.ReadModelURL == "" && isPostgres(c.EventStoreURL) {
		c.ReadModelURL = c.EventStoreURL
	}
	return c, nil
}

func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}
