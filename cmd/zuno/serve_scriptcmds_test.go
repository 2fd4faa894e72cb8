package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts' commands for `zuno serve` (serve.txtar), registered beside scriptCmds' own.
func init() {
	// freeport NAME sets $NAME to a TCP port on 127.0.0.1 free at the time of asking.
	scriptCmds["freeport"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: freeport NAME")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		port := l.Addr().(*net.TCPAddr).Port
		ts.Check(l.Close())
		ts.Setenv(args[0], strconv.Itoa(port))
	}
	// http [-H 'Name: value']... [-until REGEXP] METHOD URL [BODY] sends one request, waiting
	// up to 30 s for the server to accept connections, and prints "status N" and the body on
	// stdout. With -until it sends the request again until the body matches REGEXP (30 s), e.g.
	// until a turn the server runs has finished.
	scriptCmds["http"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg {
			ts.Fatalf("usage: http does not fail: match the status on stdout")
		}
		var headers []string
		var until *regexp.Regexp
		for len(args) >= 2 && (args[0] == "-H" || args[0] == "-until") {
			if args[0] == "-H" {
				headers = append(headers, args[1])
			} else {
				until = regexp.MustCompile(args[1])
			}
			args = args[2:]
		}
		if len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: http [-H 'Name: value']... METHOD URL [BODY]")
		}
		body := ""
		if len(args) == 3 {
			body = args[2]
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err := sendRetrying(args[0], args[1], body, headers)
			ts.Check(err)
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			ts.Check(err)
			if until == nil || until.Match(b) || time.Now().After(deadline) {
				fmt.Fprintf(ts.Stdout(), "status %d\n%s\n", res.StatusCode, b)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func sendRetrying(method, url, body string, headers []string) (*http.Response, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		for _, h := range headers {
			name, value, _ := strings.Cut(h, ":")
			req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
		res, err := http.DefaultClient.Do(req)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			return res, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
