package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
)

// The editor's file system (docs/acp.md, "The editor's file system and terminal"). When the
// client's initialize offers fs.readTextFile or fs.writeTextFile, a prompt's turn gets an
// editor (app.RunTurn.Editor): the read, write and apply_patch tools place and check a path as
// always (the permission gate first, then the workspace, the links, the protected paths),
// and only then take the file's text from fs/read_text_file or give it to
// fs/write_text_file, for the prompt's session. The client's terminal is never used: a
// command runs under Zuno's own guard and the sandbox the configuration asks for.

// DefaultClientTimeout bounds one fs request to the client; a client that does not answer
// in time is withdrawn ($/cancel_request) and the call is told editor_timeout.
const DefaultClientTimeout = 30 * time.Second

// clientOffers is what the client's initialize offered that the agent uses.
type clientOffers struct {
	readText, writeText bool
}

// editorFor is the editor of a prompt's turn in session sid, or nil when the client offers
// neither side of its file system.
func (g *Agent) editorFor(sid string) *tools.Editor {
	g.mu.Lock()
	offers := g.offers
	g.mu.Unlock()
	if !offers.readText && !offers.writeText {
		return nil
	}
	e := &tools.Editor{}
	if offers.readText {
		e.ReadText = func(ctx context.Context, path string) (string, error) { return g.readText(ctx, sid, path) }
	}
	if offers.writeText {
		e.WriteText = func(ctx context.Context, path, content string) error { return g.writeText(ctx, sid, path, content) }
	}
	return e
}

// readTextAnswer is fs/read_text_file's answer; content is required (an empty file is "").
type readTextAnswer struct {
	Content *string `json:"content"`
}

func (g *Agent) readText(ctx context.Context, sid, path string) (string, error) {
	rctx, cancel := g.clientCtx(ctx)
	defer cancel()
	ans, err := sdk.SendRequest[readTextAnswer](g.conn, rctx, sdk.ClientMethodFsReadTextFile,
		sdk.ReadTextFileRequest{SessionId: sdk.SessionId(sid), Path: path})
	if err != nil {
		return "", g.clientError(ctx, rctx, sdk.ClientMethodFsReadTextFile, path, err)
	}
	if ans.Content == nil {
		return "", domain.NewError(tools.CodeEditorFailed,
			fmt.Sprintf("the editor answered %s for %s without content", sdk.ClientMethodFsReadTextFile, path),
			"read the file again; if the editor keeps failing, run the session from zuno run, which reads the disk")
	}
	if !utf8.ValidString(*ans.Content) {
		// encoding/json replaces invalid bytes, so this does not happen; checked all the same,
		// as the credential is the text's digest.
		return "", domain.NewError(tools.CodeEditorFailed, "the editor's text for "+path+" is not valid UTF-8", "")
	}
	return *ans.Content, nil
}

func (g *Agent) writeText(ctx context.Context, sid, path, content string) error {
	rctx, cancel := g.clientCtx(ctx)
	defer cancel()
	_, err := sdk.SendRequest[json.RawMessage](g.conn, rctx, sdk.ClientMethodFsWriteTextFile,
		sdk.WriteTextFileRequest{SessionId: sdk.SessionId(sid), Path: path, Content: content})
	if err != nil {
		return g.clientError(ctx, rctx, sdk.ClientMethodFsWriteTextFile, path, err)
	}
	return nil
}

// clientCtx is the context of one request to the client: the turn's, within the timeout.
func (g *Agent) clientCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, g.timeout())
}

// clientError is the typed error of a request the client did not serve. The turn's own end
// is its context's error (the call is cancelled, or uncertain for a write, as any other);
// the timeout is editor_timeout; an error the client answered, a malformed answer or the
// connection's end is editor_failed, with the client's words.
func (g *Agent) clientError(turn, req context.Context, method, path string, err error) error {
	g.logf("%s %s: %v", method, path, err)
	if turn.Err() != nil {
		return turn.Err()
	}
	if errors.Is(req.Err(), context.DeadlineExceeded) {
		return domain.NewError(tools.CodeEditorTimeout,
			fmt.Sprintf("the editor did not answer %s for %s within %s; the request was withdrawn", method, path, g.timeout()),
			"try again; if the editor stays silent, run the session from zuno run, which uses the disk")
	}
	msg := err.Error()
	var re *sdk.RequestError
	if errors.As(err, &re) {
		msg = fmt.Sprintf("%d %s", re.Code, re.Message)
		if re.Data != nil {
			if b, jerr := json.Marshal(re.Data); jerr == nil && len(b) <= 2048 {
				msg += " " + string(b)
			}
		}
	}
	return domain.NewError(tools.CodeEditorFailed, fmt.Sprintf("the editor refused %s for %s: %s", method, path, msg),
		"check the path in the editor; Zuno does not fall back to the disk behind the editor's back")
}

func (g *Agent) timeout() time.Duration {
	if g.cfg.ClientTimeout > 0 {
		return g.cfg.ClientTimeout
	}
	return DefaultClientTimeout
}
