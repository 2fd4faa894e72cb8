package netguard_test

import (
	"errors"
	"net/netip"
	"net/url"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/web/netguard"
	"github.com/zuno-run/zuno/domain"
)

// TestClassify: each range of the seeds' list, its edges, and public neighbours.
func TestClassify(t *testing.T) {
	rows := []struct {
		addr string
		want netguard.Reason
	}{
		{"0.0.0.0", netguard.ReasonUnspecified},
		{"0.255.255.255", netguard.ReasonUnspecified},
		{"1.0.0.0", ""},
		{"9.255.255.255", ""},
		{"10.0.0.0", netguard.ReasonPrivate},
		{"10.255.255.255", netguard.ReasonPrivate},
		{"11.0.0.0", ""},
		{"100.63.255.255", ""},
		{"100.64.0.0", netguard.ReasonCGNAT},
		{"100.127.255.255", netguard.ReasonCGNAT},
		{"100.128.0.0", ""},
		{"100.100.100.200", netguard.ReasonMetadata},
		{"127.0.0.1", netguard.ReasonLoopback},
		{"127.255.255.254", netguard.ReasonLoopback},
		{"169.254.0.1", netguard.ReasonLinkLocal},
		{"169.254.169.254", netguard.ReasonMetadata},
		{"169.254.170.2", netguard.ReasonMetadata},
		{"172.15.255.255", ""},
		{"172.16.0.0", netguard.ReasonPrivate},
		{"172.31.255.255", netguard.ReasonPrivate},
		{"172.32.0.0", ""},
		{"192.0.0.8", netguard.ReasonReserved},
		{"192.0.2.1", netguard.ReasonDocumentation},
		{"192.88.99.1", netguard.ReasonReserved},
		{"192.168.0.1", netguard.ReasonPrivate},
		{"198.18.0.1", netguard.ReasonReserved},
		{"198.19.255.255", netguard.ReasonReserved},
		{"198.20.0.0", ""},
		{"198.51.100.7", netguard.ReasonDocumentation},
		{"203.0.113.9", netguard.ReasonDocumentation},
		{"224.0.0.1", netguard.ReasonMulticast},
		{"239.255.255.255", netguard.ReasonMulticast},
		{"240.0.0.1", netguard.ReasonReserved},
		{"255.255.255.255", netguard.ReasonBroadcast},
		{"93.184.215.14", ""},
		{"8.8.8.8", ""},
		{"::", netguard.ReasonUnspecified},
		{"::1", netguard.ReasonLoopback},
		{"::ffff:127.0.0.1", netguard.ReasonIPv4Mapped},
		{"::ffff:8.8.8.8", netguard.ReasonIPv4Mapped},
		{"::127.0.0.1", netguard.ReasonIPv4Embedded},
		{"64:ff9b::8.8.8.8", ""},
		{"64:ff9b::10.0.0.1", netguard.ReasonNAT64Embedded},
		{"64:ff9b::169.254.169.254", netguard.ReasonNAT64Embedded},
		{"64:ff9b:1::1", netguard.ReasonIPv4Embedded},
		{"100::1", netguard.ReasonReserved},
		{"2001::1", netguard.ReasonIPv4Embedded},
		{"2001:db8::1", netguard.ReasonDocumentation},
		{"2001:10::1", netguard.ReasonReserved},
		{"2002:7f00:1::1", netguard.ReasonIPv4Embedded},
		{"2606:4700::1111", ""},
		{"2a00:1450:4001::1", ""},
		{"3fff::1", netguard.ReasonDocumentation},
		{"5f00::1", netguard.ReasonReserved},
		{"fc00::1", netguard.ReasonUniqueLocal},
		{"fd00:ec2::254", netguard.ReasonMetadata},
		{"fe80::1", netguard.ReasonLinkLocal},
		{"fe80::1%eth0", netguard.ReasonZone},
		{"fec0::1", netguard.ReasonSiteLocal},
		{"ff02::1", netguard.ReasonMulticast},
		{"4000::1", netguard.ReasonReserved},
		{"1::1", netguard.ReasonReserved},
	}
	for _, r := range rows {
		if got := netguard.Classify(netip.MustParseAddr(r.addr)); got != r.want {
			t.Errorf("%s: %q, want %q", r.addr, got, r.want)
		}
	}
	if netguard.Classify(netip.Addr{}) != netguard.ReasonInvalid {
		t.Error("the zero address must be refused")
	}
}

// TestParseSpellings: every spelling of an IPv4 address a C resolver or a browser accepts is
// read as that address, and the canonical URL uses the dotted form.
func TestParseSpellings(t *testing.T) {
	rows := []struct{ url, host string }{
		{"http://93.184.215.14/", "93.184.215.14"},
		{"http://1572394766/", "93.184.215.14"},
		{"http://0x5d.0xb8.0xd7.0x0e/", "93.184.215.14"},
		{"http://0135.0270.0327.016/", "93.184.215.14"},
		{"http://93.12113678/", "93.184.215.14"},
		{"http://93.184.55054/", "93.184.215.14"},
		{"http://0x5db8d70e/", "93.184.215.14"},
		{"HTTP://Example.COM./x", "example.com"},
		{"https://bücher.example/", "xn--bcher-kva.example"},
		{"http://[2606:4700::1111]:8080/", "2606:4700::1111"},
		{"http://９３．１８４．２１５．１４/", "93.184.215.14"},
	}
	for _, r := range rows {
		tg, err := netguard.Parse(r.url)
		if err != nil {
			t.Fatalf("%s: %v", r.url, err)
		}
		if tg.Host != r.host {
			t.Fatalf("%s: host %q, want %q", r.url, tg.Host, r.host)
		}
	}
	tg, _ := netguard.Parse("http://1572394766:8080/a?b#frag")
	if got := tg.URL.String(); got != "http://93.184.215.14:8080/a?b" {
		t.Fatalf("canonical %q", got)
	}
}

// TestMixedAnswers: one refused address refuses the whole answer.
func TestMixedAnswers(t *testing.T) {
	pub, priv := netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("192.168.0.1")
	if _, err := netguard.CheckAnswers("h", []netip.Addr{pub, priv}); code(err) != netguard.CodeAddressRefused {
		t.Fatal(err)
	}
	if _, err := netguard.CheckAnswers("h", nil); code(err) != netguard.CodeAddressRefused {
		t.Fatal(err)
	}
	if got, err := netguard.CheckAnswers("h", []netip.Addr{pub}); err != nil || len(got) != 1 {
		t.Fatal(err)
	}
}

func code(err error) string {
	var d *domain.Error
	if errors.As(err, &d) {
		return d.Code()
	}
	return ""
}

// FuzzParse: whatever the input, Parse never panics; what it accepts is an http(s) URL
// without credentials, whose literal host is public, and whose canonical spelling parses to
// itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"http://example.com/", "http://2130706433/", "http://0177.0.0.1/", "http://0x7f.1/",
		"http://[::ffff:127.0.0.1]/", "http://user:pw@h/", "https://[fe80::1%25eth0]/", "http://1.2.3.4.5/",
		"http://h:99999/", "http://bücher.example/", "http://a..b/", "http://0x/", "http://08/", "http://%31%32%37.0.0.1/",
		"http://127.0.0.1.nip.io/", "http://[::]/", "HTTP://EXAMPLE.COM:80", "http://example.com\\@evil/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := netguard.Parse(raw)
		if err != nil {
			if code(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		u := tg.URL
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || tg.Host == "" || tg.Port == 0 {
			t.Fatalf("accepted %q as %+v", raw, tg)
		}
		if tg.Literal() && netguard.Classify(tg.Addr) != "" {
			t.Fatalf("accepted refused literal %q", raw)
		}
		if a, err := netip.ParseAddr(tg.Host); err == nil && netguard.Classify(a) != "" {
			t.Fatalf("host %q of %q is a refused address", tg.Host, raw)
		}
		again, err := netguard.Parse(u.String())
		if err != nil || again.URL.String() != u.String() || again.Host != tg.Host {
			t.Fatalf("canonical %q of %q does not parse to itself: %v", u, raw, err)
		}
	})
}

// BenchmarkParse: the guard's parse of a URL against net/url's alone (the baseline, run in
// the same process), and the classification of one address.
func BenchmarkParse(b *testing.B) {
	const raw = "https://docs.example.com:8443/guide/intro?lang=en#top"
	b.Run("net-url-baseline", func(b *testing.B) {
		for b.Loop() {
			if _, err := url.Parse(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("netguard", func(b *testing.B) {
		for b.Loop() {
			if _, err := netguard.Parse(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("classify", func(b *testing.B) {
		a := netip.MustParseAddr("2606:4700::6810:84e5")
		for b.Loop() {
			if netguard.Classify(a) != "" {
				b.Fatal("refused")
			}
		}
	})
}
