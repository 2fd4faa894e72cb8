package risk

import (
	"reflect"
	"testing"
)

func TestCalls(t *testing.T) {
	for _, tc := range []struct {
		command string
		want    []Call
	}{
		{"git add .", []Call{{"git", []Arg{{"add", true}, {".", true}}}}},
		{"sudo -u x /usr/bin/git status", []Call{{"sudo", []Arg{{"-u", true}, {"x", true}, {"/usr/bin/git", true}, {"status", true}}},
			{"git", []Arg{{"status", true}}}}},
		{"bash -c 'make $T'", []Call{{"bash", []Arg{{"-c", true}, {"make $T", true}}}, {"make", []Arg{{"", false}}}}},
		{"echo 'git add .'", []Call{{"echo", []Arg{{"git add .", true}}}}},
	} {
		got, ok := Calls(tc.command)
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.command, got, tc.want)
		}
	}
	for _, bad := range []string{"echo 'x", "a\x00b"} {
		if _, ok := Calls(bad); ok {
			t.Errorf("%q read", bad)
		}
	}
}
