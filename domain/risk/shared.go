package risk

// The exit-policy analysis (domain/verification) reads the same syntax trees as the gate and
// must see through the same wrappers (sudo, timeout 5, nice -n 10 …) to find a nested shell,
// so the gate's program-name and wrapper rules are shared from here rather than copied.

// ProgramName is the program a command word names: the base name of a program path without a
// Windows .exe suffix (/usr/bin/bash and bash.exe are both "bash").
func ProgramName(word string) string { return progName(word) }

// Unwrap returns the index in argv of the command that argv[0] runs when argv[0] is a wrapper
// the gate knows (sudo, timeout, nice, nohup, …); false when it is not one or wraps nothing.
// exact[i] says whether argv[i] is known statically; an unknown word is never taken for an
// option.
func Unwrap(argv []string, exact []bool) (int, bool) {
	if len(argv) == 0 || len(exact) != len(argv) {
		return 0, false
	}
	w, ok := wrappers[progName(argv[0])]
	if !ok {
		return 0, false
	}
	args := make([]arg, len(argv))
	for i, t := range argv {
		if exact[i] {
			args[i] = arg{{text: t, exact: true}}
		} else {
			args[i] = arg{{text: unknownMark}}
		}
	}
	return w.skip(args)
}
