package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/zuno-run/zuno/commands/queries"
)

// printConversation prints a session's conversation under zuno session show's table: each
// message with who said it, at most previewMaxLines lines of its text (its first and last
// lines around what was left out), each tool call with its arguments cut to one line, each
// result under the call it answers. Text is made safe to print (previewLine): a recorded
// model answer or command output must not move the cursor or recolour the terminal.
func printConversation(w io.Writer, conv []queries.ConversationMessage) {
	if len(conv) == 0 {
		fmt.Fprintln(w, "\nconversation: none yet")
		return
	}
	fmt.Fprintln(w, "\nconversation:")
	for _, m := range conv {
		who := m.Role
		if m.ToolCallID != "" {
			who = "result " + m.ToolCallID
			if m.IsError {
				who += " (error)"
			}
		}
		fmt.Fprintf(w, "  %s:\n", who)
		for _, l := range headTail(m.Text, previewMaxLines) {
			fmt.Fprintln(w, previewIndent+previewLine(l))
		}
		for _, c := range m.ToolCalls {
			args := strings.Join(strings.Fields(c.Arguments), " ")
			fmt.Fprintln(w, previewIndent+previewLine(fmt.Sprintf("→ %s %s %s", c.Name, c.ID, args)))
		}
	}
}
