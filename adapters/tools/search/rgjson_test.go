package search

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var decoderSeeds = []string{
	`{"type":"match","data":{"path":{"text":"./a.go"},"lines":{"text":"\tif err != nil {\n"},"line_number":68,"absolute_offset":1349,"submatches":[{"match":{"text":"err != nil"},"start":4,"end":14}]}}`,
	`{"type":"context","data":{"path":{"text":"./nl\nname \"q\" \\ é.txt"},"lines":{"text":"a\u0000b\u001b[31m\ud83d\ude00\ud800x\r\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}`,
	`{"type":"match","data":{"path":{"bytes":"Li9iYWT/bmFtZS50eHQ="},"lines":{"bytes":"/2Zvbwo="},"line_number":3,"absolute_offset":0,"submatches":[{"match":{"bytes":"/w=="},"start":0,"end":1}]}}`,
	`{ "data" : { "line_number" : 7 , "lines" : { "text" : "x\n" } , "path" : { "text" : "p" } } , "type" : "match" }`,
	`{"type":"match","data":{"path":{"text":"./x"},"lines":{"text":"y\n"},"line_number":null}}`,
	`{"type":"begin","data":{"path":{"text":"./a.go"}}}`,
	`{"type":"summary","data":{"elapsed_total":{"human":"0.1s","nanos":1,"secs":0},"stats":{}}}`,
	`{"type":"match","data":{"path":{"text":"./x"},"lines":{"text":"y\n"},"line_number":1,"extra":[1,{"a":"]}"},true,-2.5e3]}}`,
	`{"type":"match","data":{"path":{"text":"./x"`,
	`not json`,
}

// The fast scanner must agree with encoding/json on everything they both read.
func TestDecoderAgreesWithEncodingJSON(t *testing.T) {
	for _, seed := range decoderSeeds {
		checkDecoder(t, []byte(seed))
	}
	var d decoder
	r, ok, err := d.decode([]byte(decoderSeeds[1]))
	if err != nil || !ok || string(r.Path) != "./nl\nname \"q\" \\ é.txt" || string(r.Line) != "a\x00b\x1b[31m😀\uFFFDx\r\n" || r.text() != "a\x00b\x1b[31m😀\uFFFDx" {
		t.Fatalf("%v %v %q %q", ok, err, r.Path, r.Line)
	}
	r, ok, _ = d.decode([]byte(decoderSeeds[2]))
	if !ok || string(r.Path) != "./bad\xffname.txt" || r.text() != "\uFFFDfoo" || r.LineNumber != 3 {
		t.Fatalf("bytes: %q %q", r.Path, r.Line)
	}
	if _, ok, err := d.decode([]byte(decoderSeeds[5])); ok || err != nil {
		t.Fatal("begin message decoded as a line")
	}
	if _, _, err := d.decode([]byte(decoderSeeds[9])); err == nil {
		t.Fatal("garbage decoded without an error")
	}
}

// FuzzDecoder builds rg-shaped messages from fuzzed values and checks that the scanner
// reads them back, then throws raw bytes at it to look for panics.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte("./a.go"), []byte("\tif err != nil {\n"), 68, true, []byte(decoderSeeds[0]))
	f.Add([]byte("./bad\xffname"), []byte("\xff\x00<&>\u2028\n"), 1, false, []byte(decoderSeeds[1]))
	f.Fuzz(func(t *testing.T, path, line []byte, num int, match bool, raw []byte) {
		var d decoder
		d.decode(raw) // must not panic

		if num < 1 {
			num = 1 - num%1000000
		}
		typ := "context"
		if match {
			typ = "match"
		}
		msg, err := json.Marshal(map[string]any{"type": typ, "data": map[string]any{
			"path": rgValue(path), "lines": rgValue(line), "line_number": num,
			"absolute_offset": 12, "submatches": []any{map[string]any{"match": rgValue(line), "start": 0, "end": 1}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		r, ok, err := d.decode(msg)
		if err != nil || !ok || r.Type != typ || !bytes.Equal(r.Path, path) || !bytes.Equal(r.Line, line) || r.LineNumber != num {
			t.Fatalf("%s:\n%v %v %+v", msg, ok, err, r)
		}
		checkDecoder(t, msg)
	})
}

// rgValue is how rg prints arbitrary data.
func rgValue(b []byte) map[string]string {
	if utf8.Valid(b) {
		return map[string]string{"text": string(b)}
	}
	return map[string]string{"bytes": base64.StdEncoding.EncodeToString(b)}
}

func checkDecoder(t *testing.T, msg []byte) {
	t.Helper()
	var d decoder
	fast, parsed := d.fast(msg)
	if !parsed {
		return
	}
	slow, err := d.slow(msg)
	if err != nil {
		return // the scanner is more lenient about what it skips; it must not disagree on what it reads
	}
	if fast.Type != slow.Type || !bytes.Equal(fast.Path, slow.Path) || !bytes.Equal(fast.Line, slow.Line) || fast.LineNumber != slow.LineNumber {
		t.Fatalf("%q:\nfast %+v\nslow %+v", msg, fast, slow)
	}
}
