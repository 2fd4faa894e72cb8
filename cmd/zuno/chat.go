package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/faces/tui"
)

func newChatCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat [--session S | --continue] [--model M] [--agent A] [--dir D] [--plain]",
		Short: "An interactive session (zuno alone at a terminal): full-screen there, plain lines elsewhere",
		Long: `Runs an interactive session (docs/tui.md): each line typed is the next turn's prompt, the
answer streams, each tool call is a line with its preview, and permission asks and questions
are answered where they appear (o/a/r selects an ask's reply: once, always for the session,
reject; Enter records it). Every turn, answer, steer and interruption is a command of the
application, recorded as zuno run's and the server's are.

Keys: Enter sends (while a turn runs, the line steers it; Tab queues it for the next turn);
Ctrl-C interrupts the running turn, and a second Ctrl-C while idle (or two within 2 s) leaves;
Ctrl-D on an empty line leaves; PgUp/PgDn scroll.
Slash commands: /goal [complete|resume|answer TEXT], /resume [ses_…] (without an id: a
session picker from the log), /agent [NAME], /model [SPEC], /new, /queue TEXT, /help, /quit.

Full-screen when standard input and standard output are terminals (and TERM is not dumb);
otherwise (or with --plain)
plain lines, without escape sequences: a line is read when the chat needs one (a prompt while
no turn runs, the answer to what it shows), and end of input leaves once the turn has ended.
zuno with no arguments runs zuno chat at a terminal and prints this help anywhere else.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var o chatOptions
			o.session, _ = cmd.Flags().GetString("session")
			o.continueLast, _ = cmd.Flags().GetBool("continue")
			o.model, _ = cmd.Flags().GetString("model")
			o.agent, _ = cmd.Flags().GetString("agent")
			o.dir, _ = cmd.Flags().GetString("dir")
			o.plain, _ = cmd.Flags().GetBool("plain")
			if o.continueLast && o.session != "" {
				return usagef("--continue picks the latest session of this workspace; drop it or --session")
			}
			return runChat(cmd, o)
		},
	}
	cmd.Flags().String("session", "", "continue this session (ses_…, or last: the latest of all)")
	cmd.Flags().Bool("continue", false, "continue the latest session working in this directory")
	cmd.Flags().String("model", "", "openai/<model>, anthropic/<model> or scripted:<file> (/model changes it)")
	cmd.Flags().String("agent", "", "agent of the first turn: build (default), deep, plan or orchestrator (/agent changes it)")
	cmd.Flags().String("dir", "", "workspace directory of a new session (default: the current directory)")
	cmd.Flags().Bool("plain", false, "plain lines even at a terminal")
	addApprovalFlags(cmd)
	return cmd
}

type chatOptions struct {
	session, model, agent, dir string
	continueLast, plain        bool
}

// bareRun is zuno with no arguments: zuno chat at a terminal, the help anywhere else (a
// script that runs zuno alone keeps getting what it got before chat existed).
func bareRun(cmd *cobra.Command, _ []string) error {
	if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
		return cmd.Help()
	}
	return runChat(cmd, chatOptions{})
}

// runChat opens the application and runs the chat. Ctrl-C is the chat's own (it interrupts a
// turn before it leaves), so the command's context ignores SIGINT; SIGTERM still ends it.
func runChat(cmd *cobra.Command, o chatOptions) error {
	// A terminal that says it is dumb cannot draw a full screen (no cursor addressing).
	full := !o.plain && isTerminal(os.Stdin) && isTerminal(os.Stdout) && os.Getenv("TERM") != "dumb"
	ctx, cancel := context.WithCancel(context.WithoutCancel(cmd.Context()))
	defer cancel()
	interrupts := make(chan struct{}, 4)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case s := <-sigs:
				if s != os.Interrupt {
					cancel()
					return
				}
				select {
				case interrupts <- struct{}{}:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	// The application is opened on this context too: its command bus must outlive a SIGINT
	// (main's context ends at the first one).
	cmd.SetContext(ctx)
	return withApp(cmd, func(_ context.Context, a *app) error {
		cfg, err := chatConfig(ctx, a, o)
		if err != nil {
			return err
		}
		if full {
			return tui.Run(ctx, cfg, cmd.InOrStdin(), cmd.OutOrStdout(), interrupts)
		}
		return tui.RunPlain(ctx, cfg, cmd.InOrStdin(), cmd.OutOrStdout(), interrupts)
	})
}

// chatConfig is the chat's first session and the observer its turns print through: zuno run's
// (the same lines and previews), with asks and question calls handed to the chat.
func chatConfig(ctx context.Context, a *app, o chatOptions) (tui.Config, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return tui.Config{}, err
	}
	session, err := pickSession(ctx, a, runOptions{Session: o.session, Continue: o.continueLast}, cwd)
	if err != nil {
		return tui.Config{}, err
	}
	if session != "" {
		if err := a.Queries.RequireSession(ctx, session); err != nil {
			return tui.Config{}, err
		}
	}
	dir := o.dir
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return tui.Config{}, err
		}
	}
	return tui.Config{App: a.Application, Session: session, Agent: o.agent, Model: o.model, Dir: dir, Cwd: cwd,
		Observe: func(session string, w io.Writer, f tui.Face) turn.Observer {
			obs := newRunObserver(w, "text", false)
			obs.dir = askWorkspace(ctx, a, session, dir, cwd)
			return &chatObserver{runObserver: obs, face: f}
		}}, nil
}

// chatObserver is zuno run's observer with the asks and question calls handed to the chat
// instead of this process's terminal prompts.
type chatObserver struct {
	*runObserver
	face tui.Face
}

func (c *chatObserver) Recorded(rec events.Recorded, p events.Payload) {
	switch e := p.(type) {
	case events.PermissionAsked:
		c.mu.Lock()
		view := c.askView(e)
		c.mu.Unlock()
		c.face.Ask(e, askedBy(e), view)
		return
	case events.ToolStarted:
		c.face.Decided(e.CallID)
		c.mu.Lock()
		own := c.root == "" || rec.Stream == "session-"+c.root // a child never asks the user
		c.mu.Unlock()
		if zapp.AsksUser(e.Tool) && own {
			c.face.Question(e)
			return
		}
	case events.ToolBlocked:
		c.face.Decided(e.CallID)
	}
	c.runObserver.Recorded(rec, p)
}
