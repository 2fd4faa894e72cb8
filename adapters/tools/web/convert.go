package web

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/zuno-run/zuno/domain"
)

// Output formats of webfetch.
const (
	FormatMarkdown = "markdown"
	FormatText     = "text"
	FormatHTML     = "html"
)

// CodeUnsupportedContent: the response is not text (an image, an archive, a binary).
const CodeUnsupportedContent = "unsupported_content"

// render turns a body into what the model reads: HTML converted to Markdown (the default) or
// plain text, or kept as HTML; other text types as they are, decoded to UTF-8 from the charset
// the response declares or its bytes imply.
func render(body []byte, contentType, format, pageURL string) (string, error) {
	media, _, _ := mime.ParseMediaType(contentType)
	media = strings.ToLower(media)
	if !textual(media, body) {
		return "", domain.NewError(CodeUnsupportedContent, fmt.Sprintf("the response is %q, not text", contentType),
			"webfetch returns text, HTML, JSON and XML; fetch a page that links to it instead")
	}
	text, err := decode(body, contentType)
	if err != nil {
		return "", domain.NewError(CodeUnsupportedContent, "the response's text cannot be decoded: "+err.Error(), "fetch another URL")
	}
	isHTML := media == "text/html" || media == "application/xhtml+xml" || (media == "" && looksHTML(text))
	if !isHTML || format == FormatHTML {
		return text, nil
	}
	if format == FormatText {
		return htmlText(text), nil
	}
	// Relative links become absolute against the page, so the model can fetch them.
	md, err := htmltomarkdown.ConvertString(text, converter.WithDomain(pageURL))
	if err != nil {
		return htmlText(text), nil
	}
	return md, nil
}

// textual reports whether a media type (or, without one, the bytes) is text.
func textual(media string, body []byte) bool {
	switch {
	case media == "":
		return utf8.Valid(body) || !bytes.ContainsRune(body, 0)
	case strings.HasPrefix(media, "text/"):
		return true
	case strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	}
	switch media {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/xhtml+xml", "application/x-yaml", "application/yaml", "application/toml":
		return true
	}
	return false
}

func looksHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 512)]))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

// decode reads body as UTF-8, converting from the declared or sniffed charset.
func decode(body []byte, contentType string) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		return "", err
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
}

// skipText are elements whose text is not page text.
var skipText = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "head": true, "svg": true}

// blockText are elements that end a line of text.
var blockText = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "pre": true, "section": true, "article": true, "header": true, "footer": true, "table": true,
	"ul": true, "ol": true, "blockquote": true, "hr": true, "title": true}

// htmlText is the text of an HTML document: what a reader sees, without scripts or styles,
// a line per block.
func htmlText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return collapse(b.String())
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			if skipText[string(name)] {
				skip++
			}
			if blockText[string(name)] {
				b.WriteByte('\n')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if skipText[string(name)] && skip > 0 {
				skip--
			}
			if blockText[string(name)] {
				b.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		}
	}
}

// collapse trims each line and drops runs of blank lines.
func collapse(s string) string {
	var out []string
	blank := true
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, l)
		blank = false
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
