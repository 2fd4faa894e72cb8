package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
	// http [-H 'Name: value']... METHOD URL [BODY] sends one request, waiting up to 30 s for
	// the server to accept connections, and prints "status N" and the body on stdout.
	scriptCmds["http"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg {
			ts.Fatalf("usage: http does not fail: match the status on stdout")
		}
		var headers []string
		for len(args) >= 2 && args[0] == "-H" {
			headers, args = append(headers, args[1]), args[2:]
		}
		if len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: http [-H 'Name: value']... METHOD URL [BODY]")
		}
		body := ""
		if len(args) == 3 {
			body = args[2]
		}
		res, err := sendRetrying(args[0], args[1], body, headers)
		ts.Check(err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "status %d\n%s\n", res.StatusCode, b)
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
