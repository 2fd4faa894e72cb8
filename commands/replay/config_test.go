package replay

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/events"
)

func TestConfigChanges(t *testing.T) {
	a := events.ConfigFile{Layer: "global", Path: "/g/zuno.json", SHA256: "aa"}
	a2 := events.ConfigFile{Layer: "global", Path: "/g/zuno.json", SHA256: "bb"}
	p := events.ConfigFile{Layer: "project", Path: "/w/zuno.json", SHA256: "cc"}
	for _, tc := range []struct {
		name     string
		was, now []events.ConfigFile
		want     []ConfigChange
	}{
		{"same files", []events.ConfigFile{a, p}, []events.ConfigFile{a, p}, nil},
		{"none then or now", nil, nil, nil},
		{"changed", []events.ConfigFile{a}, []events.ConfigFile{a2}, []ConfigChange{{TurnID: "t", Layer: "global", Path: a.Path, Recorded: "aa", Now: "bb"}}},
		{"gone", []events.ConfigFile{a, p}, []events.ConfigFile{a}, []ConfigChange{{TurnID: "t", Layer: "project", Path: p.Path, Recorded: "cc"}}},
		{"new", []events.ConfigFile{a}, []events.ConfigFile{a, p}, []ConfigChange{{TurnID: "t", Layer: "project", Path: p.Path, Now: "cc"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := configChanges("t", tc.was, tc.now); !slices.Equal(got, tc.want) {
				t.Fatalf("configChanges = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The files a turn read are taken out of its start before it is compared, and only them.
func TestTakeConfig(t *testing.T) {
	files, rest := takeConfig(json.RawMessage(`{"agent":"build","config":[{"layer":"global","path":"/g","sha256":"aa"}]}`))
	if len(files) != 1 || files[0].SHA256 != "aa" || string(rest) != `{"agent":"build"}` {
		t.Fatalf("takeConfig = %+v, %s", files, rest)
	}
	files, rest = takeConfig(json.RawMessage(`{"agent":"build"}`))
	if files != nil || string(rest) != `{"agent":"build"}` {
		t.Fatalf("takeConfig without config = %+v, %s", files, rest)
	}
}
